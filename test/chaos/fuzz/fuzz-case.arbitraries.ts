import fc from 'fast-check';
import { PAYMENT_EVENT_TYPES } from '../../../lib/webhooks/index.js';
import { FUZZ_MAX_BODY_BYTES, FUZZ_TOLERANCE_SECONDS, type FuzzScheme } from './fuzz-receiver.fixture.js';
import type {
  BodySpec,
  EventBodySpec,
  FuzzCaseSpec,
  FuzzCategory,
  JunkBodySpec,
  MutationSpec,
  RawJunkSpec,
  SignatureSpec,
} from './fuzz-case.model.js';

/** Headers the generators never set at random: they frame the HTTP message or route it. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'expect',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'content-type',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'x-payments-signature',
  'x-payments-timestamp',
  'x-forwarded-proto',
  'x-forwarded-for',
  'proxy-connection',
  'http2-settings',
]);

/** Every byte Node's HTTP client accepts in a header value (tab, printable ASCII, Latin-1). */
const HEADER_VALUE_CHARS = [
  '\t',
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  ...Array.from({ length: 0x80 }, (_, i) => String.fromCharCode(0x80 + i)),
];

const headerName = fc
  .stringMatching(/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,24}$/)
  .filter((name) => !RESERVED_HEADERS.has(name.toLowerCase()));
const headerValue = fc.string({ unit: fc.constantFrom(...HEADER_VALUE_CHARS), maxLength: 120 });
const extraHeaders = fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 });

const UNKNOWN_TYPES = [
  'payment_intent.processing',
  'payment_intent.bogus',
  'refund.created',
  'charge.refunded',
  'setup_intent.*',
  'PAYMENT_INTENT.SUCCEEDED',
];
const documentedType = fc.constantFrom(...PAYMENT_EVENT_TYPES);
const eventType = fc.oneof(
  { weight: 8, arbitrary: documentedType },
  { weight: 1, arbitrary: fc.constantFrom(...UNKNOWN_TYPES) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
);

/** Keys that every JSON parser keeps as plain data (no `__proto__`: Fastify refuses it before the receiver's checks, legitimately). */
const safeKey = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);
const safeJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 20 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(safeKey, tie('value'), { maxKeys: 3 }),
  ),
})).value;

export const eventBody: fc.Arbitrary<EventBodySpec> = fc.record({
  kind: fc.constant('event' as const),
  id: fc.uuid(),
  // Mostly the accepted endpoint: unknown endpoints are a minority case.
  allowedEndpoint: fc.constantFrom(true, true, true, true, true, true, true, true, true, false),
  otherEndpointId: fc.uuid(),
  type: eventType,
  fail: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  amount: fc.integer({ min: 0, max: 10_000_000 }),
  extraData: fc.dictionary(safeKey, safeJson, { maxKeys: 3 }),
  metadata: fc.oneof(
    fc.constant(null),
    fc.constant('absent' as const),
    fc.dictionary(safeKey, safeJson, { maxKeys: 3 }),
  ),
  format: fc.constantFrom('compact' as const, 'pretty' as const, 'escaped' as const),
  pollute: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
});

const brokenShape: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    id: fc.oneof(
      fc.uuid(),
      fc.string({ maxLength: 40 }),
      fc.integer(),
      fc.constant(null),
      fc.uuid().map((u) => `${u}x`),
    ),
    webhook_id: fc.oneof(fc.uuid(), fc.string({ maxLength: 40 }), fc.constant(null), fc.integer()),
    event: fc.oneof(
      documentedType,
      fc.string({ maxLength: 30 }),
      fc.constant(''),
      fc.constant('   '),
      fc.integer(),
      fc.constant(null),
    ),
    data: fc.oneof(
      fc.dictionary(safeKey, safeJson, { maxKeys: 3 }),
      safeJson,
      fc.array(safeJson, { maxLength: 3 }),
      fc.constant(null),
      fc.string(),
    ),
    metadata: fc.oneof(
      fc.constant(null),
      fc.dictionary(safeKey, safeJson, { maxKeys: 2 }),
      fc.string(),
      fc.integer(),
      fc.array(safeJson, { maxLength: 2 }),
    ),
  },
  { requiredKeys: [] },
);

export const junkBody: fc.Arbitrary<JunkBodySpec> = fc.oneof(
  fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 2048 }) }),
  fc.record({ kind: fc.constant('text' as const), text: fc.string({ unit: 'binary', maxLength: 512 }) }),
  fc.record({ kind: fc.constant('json' as const), json: fc.json({ maxDepth: 4 }) }),
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('shape' as const), value: brokenShape, pollute: fc.boolean() }),
  },
  fc.record({
    kind: fc.constant('deep' as const),
    depth: fc.integer({ min: 100, max: 6000 }),
    open: fc.constantFrom('array' as const, 'object' as const),
  }),
  fc.record({
    kind: fc.constant('oversize' as const),
    size: fc.integer({ min: FUZZ_MAX_BODY_BYTES + 1, max: FUZZ_MAX_BODY_BYTES * 4 }),
    fill: fc.constantFrom('json' as const, 'bytes' as const),
  }),
  fc.record({ kind: fc.constant('bom' as const), event: eventBody }),
  fc.constant({ kind: 'empty' as const }),
);

const base64Of = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const hexOf = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const digestBytes = fc.uint8Array({ minLength: 32, maxLength: 32 });

/** Signature-shaped junk for both schemes: forged digests, wrong versions, entry lists, random text. */
const junkSignatureValue = fc.oneof(
  digestBytes.map((b) => `v1,${base64Of(b)}`),
  digestBytes.map((b) => `sha256=${hexOf(b)}`),
  fc
    .array(
      fc.oneof(
        digestBytes.map((b) => `v1,${base64Of(b)}`),
        fc.constantFrom('v1,', 'v1', 'v2,abc', ',', 'v1,====', 'v1,%%%'),
      ),
      { minLength: 1, maxLength: 5 },
    )
    .map((entries) => entries.join(' ')),
  headerValue,
);
const junkTimestamp = fc.oneof(
  fc.integer({ min: -1, max: 2 ** 40 }).map(String),
  fc.constantFrom(
    '',
    'NaN',
    '1e9',
    '0x10',
    '+1700000000',
    ' 17 ',
    '1700000000.5',
    '-1700000000',
    '99999999999999999999',
  ),
  headerValue,
);
const junkSignatureHeaders: fc.Arbitrary<Array<[string, string]>> = fc.array(
  fc.oneof(
    fc.tuple(
      fc.constantFrom('webhook-signature', 'Webhook-Signature', 'x-payments-signature', 'X-PAYMENTS-SIGNATURE'),
      junkSignatureValue,
    ),
    fc.tuple(fc.constantFrom('webhook-timestamp', 'x-payments-timestamp'), junkTimestamp),
    fc.tuple(fc.constantFrom('webhook-id', 'Webhook-Id'), fc.oneof(fc.uuid(), headerValue)),
  ),
  { minLength: 1, maxLength: 5 },
);

const skewInside = fc.integer({ min: -(FUZZ_TOLERANCE_SECONDS - 100), max: FUZZ_TOLERANCE_SECONDS - 100 });
const skewOutside = fc.oneof(
  fc.integer({ min: FUZZ_TOLERANCE_SECONDS + 100, max: 10_000_000 }),
  fc.integer({ min: -10_000_000, max: -(FUZZ_TOLERANCE_SECONDS + 100) }),
);
const secretIndex = fc.constantFrom(0 as const, 1 as const);

const validSignature: fc.Arbitrary<SignatureSpec> = fc.record({
  kind: fc.constant('valid' as const),
  secretIndex,
  skewSeconds: skewInside,
  mixedCaseNames: fc.boolean(),
  junkEntries: fc.array(fc.constantFrom('v1,', 'v2,AAAA', 'v1,Ym9ndXM=', 'v1a,xyz', 'junk'), { maxLength: 3 }),
  upperHex: fc.boolean(),
});

const mutation: fc.Arbitrary<MutationSpec> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('flipBody' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  },
  fc.record({ op: fc.constant('truncateBody' as const), by: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ op: fc.constant('appendBody' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('flipSignature' as const),
      at: fc.nat(),
      shift: fc.integer({ min: 1, max: 15 }),
    }),
  },
  fc.record({ op: fc.constant('shiftTimestamp' as const), by: fc.constantFrom(-5, -2, -1, 1, 2, 5) }),
  fc.record({ op: fc.constant('changeId' as const), id: fc.uuid() }),
  fc.record({
    op: fc.constant('dropHeader' as const),
    which: fc.constantFrom('signature' as const, 'timestamp' as const, 'id' as const),
  }),
  fc.record({
    op: fc.constant('wrongVersion' as const),
    tag: fc.constantFrom('v2', 'v1a', 'V1', '', 'v0', 'sha1=', 'SHA256=', 'sha512='),
  }),
  fc.record({ op: fc.constant('duplicateTimestamp' as const), by: fc.constantFrom(-3, 1, 7) }),
);

const signatureForJunk: fc.Arbitrary<SignatureSpec> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('junk' as const), headers: junkSignatureHeaders }) },
  fc.record({ kind: fc.constant('foreign' as const), skewSeconds: skewInside }),
  fc.record({ kind: fc.constant('stale' as const), skewSeconds: skewOutside }),
  fc.record({
    kind: fc.constant('malformedTimestamp' as const),
    value: junkTimestamp.filter((t) => !/^\d{1,12}$/.test(t.trim())),
  }),
);

/** Content types a delivery may carry: JSON spellings, other media types, junk, none. */
export const SAFE_JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8'];
const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SAFE_JSON_CONTENT_TYPES) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'APPLICATION/JSON',
      'application/json;charset=UTF-8',
      'text/plain',
      'text/plain; charset=utf-8',
      'application/octet-stream',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/vnd.api+json',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'text/html',
      '',
      'application/*',
      '*/*',
      'json',
    ),
  },
  { weight: 1, arbitrary: headerValue },
  { weight: 1, arbitrary: fc.constant(null) },
);
const jsonContentType = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...SAFE_JSON_CONTENT_TYPES) },
  { weight: 2, arbitrary: contentType },
);

const WEBHOOK_PATH = '/payments/webhooks';
const path = fc.oneof(
  { weight: 20, arbitrary: fc.constant(WEBHOOK_PATH) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      `${WEBHOOK_PATH}/`,
      `${WEBHOOK_PATH}?x=1`,
      '/PAYMENTS/WEBHOOKS',
      '/payments//webhooks',
      '/payments/webhooks/../webhooks',
      '/payments/webhook',
      '/',
      '/payments/webhooks%00',
    ),
  },
);
const junkMethod = fc.oneof(
  { weight: 12, arbitrary: fc.constant('POST') },
  { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
);

const rawJunk: fc.Arbitrary<RawJunkSpec> = fc.oneof(
  fc.record({
    kind: fc.constant('badRequestLine' as const),
    line: fc.string({ unit: 'binary-ascii', maxLength: 80 }).map((s) => s.replace(/[\r\n]/g, ' ')),
  }),
  fc.record({
    kind: fc.constant('badContentLength' as const),
    value: fc.constantFrom('abc', '-1', '1e3', '12, 13', '0x10', '99999999999999999999'),
    body: fc.string({ maxLength: 40 }),
  }),
  fc.record({
    kind: fc.constant('shortBody' as const),
    declared: fc.integer({ min: 10, max: 500 }),
    body: fc.string({ maxLength: 9 }),
  }),
  fc.record({
    kind: fc.constant('badChunked' as const),
    sizeLine: fc.constantFrom('zz', '-5', 'ffffffffffffffffff', '5;ext=' + 'a'.repeat(20), ''),
    body: fc.string({ maxLength: 40 }),
  }),
  fc.record({ kind: fc.constant('lengthAndChunked' as const), body: fc.string({ maxLength: 40 }) }),
  fc.record({ kind: fc.constant('garbage' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 300 }) }),
  fc.record({ kind: fc.constant('headerFlood' as const), count: fc.integer({ min: 200, max: 2500 }) }),
);

const chunkSizes = fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 8 });
const transport = fc.constantFrom(
  'http' as const,
  'http' as const,
  'http' as const,
  'http' as const,
  'http' as const,
  'http' as const,
  'http' as const,
  'http' as const,
  'http' as const,
  'chunked' as const,
);

const NO_BODY_JUNK: JunkBodySpec = { kind: 'empty' };

function caseOf(category: FuzzCategory, fields: Partial<FuzzCaseSpec> & { target: FuzzScheme }): FuzzCaseSpec {
  return {
    category,
    method: 'POST',
    path: WEBHOOK_PATH,
    body: NO_BODY_JUNK as BodySpec,
    signature: { kind: 'none' },
    contentType: 'application/json',
    extraHeaders: [],
    transport: 'http',
    chunkSizes: [],
    replayPick: 0,
    raw: null,
    ...fields,
  };
}

const target = fc.constantFrom('standard' as const, 'hmac' as const);

/**
 * One fuzz case. The mix: totally random junk (random bodies, header sets, signature strings,
 * timestamps, content types, methods and paths), valid signatures over junk or broken shapes, valid
 * deliveries with mutated bytes or headers, valid deliveries (with variations that keep them valid),
 * replays of recent valid events, and malformed HTTP on a raw socket.
 */
export const fuzzCase: fc.Arbitrary<FuzzCaseSpec> = fc.oneof(
  {
    weight: 22,
    arbitrary: fc
      .record({
        target,
        method: junkMethod,
        path,
        body: fc.oneof(junkBody, eventBody),
        signature: signatureForJunk,
        contentType,
        extraHeaders,
        transport,
        chunkSizes,
      })
      .map((f) => caseOf('junk', f)),
  },
  {
    weight: 18,
    arbitrary: fc
      .record({
        target,
        path,
        body: junkBody,
        signature: validSignature,
        contentType: jsonContentType,
        extraHeaders,
        transport,
        chunkSizes,
      })
      .map((f) => caseOf('signedJunk', f)),
  },
  {
    weight: 22,
    arbitrary: fc
      .record({
        target,
        path,
        body: eventBody,
        signature: fc.record({ kind: fc.constant('mutated' as const), secretIndex, skewSeconds: skewInside, mutation }),
        contentType: jsonContentType,
        extraHeaders,
        transport,
        chunkSizes,
      })
      .map((f) => caseOf('mutated', f)),
  },
  {
    weight: 28,
    arbitrary: fc
      .record({
        target,
        path,
        body: eventBody,
        signature: validSignature,
        contentType: jsonContentType,
        extraHeaders,
        transport,
        chunkSizes,
      })
      .map((f) => caseOf('valid', f)),
  },
  {
    weight: 5,
    arbitrary: fc
      .record({
        target,
        body: eventBody,
        signature: validSignature,
        contentType: fc.constantFrom(...SAFE_JSON_CONTENT_TYPES),
        replayPick: fc.nat(),
      })
      .map((f) => caseOf('replay', f)),
  },
  { weight: 5, arbitrary: fc.record({ target, raw: rawJunk }).map((f) => caseOf('rawJunk', f)) },
);
