import {
  FUZZ_ENDPOINT_ID,
  FUZZ_FOREIGN_STANDARD_SECRET,
  FUZZ_HMAC,
  FUZZ_STANDARD_SECRETS,
  type FuzzScheme,
} from './fuzz-receiver.fixture.js';
import type {
  BodySpec,
  EventBodySpec,
  FuzzCaseSpec,
  MutationSpec,
  RawJunkSpec,
  SignatureSpec,
} from './fuzz-case.model.js';
import { SAFE_JSON_CONTENT_TYPES } from './fuzz-case.arbitraries.js';
import {
  boundHandlers,
  hmacSignature,
  isOversize,
  judgePayload,
  standardSignature,
  type DeliveryExpectation,
} from './fuzz-delivery.oracle.js';

const WEBHOOK_PATH = '/payments/webhooks';
const ROUTED_PATHS = new Set([WEBHOOK_PATH, `${WEBHOOK_PATH}?x=1`]);

/** A request ready to send, and what the receiver must do with it. */
export interface BuiltRequest {
  target: FuzzScheme;
  method: string;
  path: string;
  /** Header lines in order; a name may repeat. */
  headers: Array<[string, string]>;
  body: Buffer;
  transport: 'http' | 'chunked' | 'raw';
  chunkSizes: number[];
  /** The whole message, for `raw`. */
  rawMessage: Buffer | undefined;
  expect: DeliveryExpectation;
}

/** A recently sent valid event, kept to be delivered again (the service's retries). */
export interface ReplayableEvent {
  target: FuzzScheme;
  body: Buffer;
}

/** Serialises a valid payload: compact, pretty, or with every non-ASCII character escaped. */
/**
 * Makes a generated id unique to its case (fast-check repeats edge values such as the all-zero UUID),
 * keeping it a UUID: the last 12 hex digits become the case number. Repeats are tested by replays.
 */
export function uniqueEventId(id: string, sequence: number): string {
  return `${id.slice(0, 24)}${sequence.toString(16).padStart(12, '0')}`;
}

export function serialiseEvent(spec: EventBodySpec): Buffer {
  const metadata = spec.metadata === 'absent' ? undefined : spec.metadata;
  const withFailure = spec.fail ? { ...(metadata ?? {}), fuzz_fail: true } : metadata;
  const payload: Record<string, unknown> = {
    id: spec.id,
    webhook_id: spec.allowedEndpoint ? FUZZ_ENDPOINT_ID : spec.otherEndpointId,
    event: spec.type,
    data: {
      ...spec.extraData,
      payment_intent: {
        id: spec.id.split('').reverse().join(''),
        state: spec.type.split('.')[1] ?? 'x',
        amount: spec.amount,
      },
    },
  };
  if (withFailure !== undefined) payload['metadata'] = withFailure;
  let text = spec.format === 'pretty' ? JSON.stringify(payload, null, 2) : JSON.stringify(payload);
  if (spec.format === 'escaped')
    text = text
      .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .replace(/\//g, '\\/');
  if (spec.pollute)
    text = text.replace(
      '"data":{',
      '"data":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},',
    );
  return Buffer.from(text, 'utf8');
}

function bodyBytes(spec: BodySpec, sequence: number): Buffer {
  switch (spec.kind) {
    case 'event':
      return serialiseEvent({ ...spec, id: uniqueEventId(spec.id, sequence) });
    case 'bytes':
      return Buffer.from(spec.bytes);
    case 'text':
      return Buffer.from(spec.text, 'utf8');
    case 'json':
      return Buffer.from(spec.json, 'utf8');
    case 'shape': {
      let text = JSON.stringify(spec.value);
      if (spec.pollute)
        text = text
          .replace(/^\{/, '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},')
          .replace(/,\}$/, '}');
      return Buffer.from(text, 'utf8');
    }
    case 'deep':
      return Buffer.from(
        spec.open === 'array'
          ? `${'['.repeat(spec.depth)}${']'.repeat(spec.depth)}`
          : `${'{"a":'.repeat(spec.depth)}1${'}'.repeat(spec.depth)}`,
      );
    case 'oversize':
      return spec.fill === 'bytes'
        ? Buffer.alloc(spec.size, 0x61)
        : Buffer.from(`{"id":"${'x'.repeat(Math.max(0, spec.size - 10))}"}`);
    case 'bom':
      return Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        serialiseEvent({ ...spec.event, id: uniqueEventId(spec.event.id, sequence) }),
      ]);
    case 'empty':
      return Buffer.alloc(0);
  }
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const HEX = '0123456789abcdef';

interface SignedParts {
  headers: Array<[string, string]>;
  body: Buffer;
}

/** Signs `body` for `target` with a configured secret at `now + skew`; then applies the mutation, if any. */
function signValid(
  target: FuzzScheme,
  body: Buffer,
  msgId: string,
  secretIndex: 0 | 1,
  timestamp: string,
  mixedCase: boolean,
): SignedParts {
  if (target === 'standard') {
    const signature = standardSignature(FUZZ_STANDARD_SECRETS[secretIndex], msgId, timestamp, body);
    return {
      body,
      headers: [
        [mixedCase ? 'Webhook-Id' : 'webhook-id', msgId],
        [mixedCase ? 'WEBHOOK-TIMESTAMP' : 'webhook-timestamp', timestamp],
        [mixedCase ? 'Webhook-Signature' : 'webhook-signature', signature],
      ],
    };
  }
  return {
    body,
    headers: [
      [mixedCase ? 'X-Payments-Timestamp' : FUZZ_HMAC.timestampHeader, timestamp],
      [
        mixedCase ? 'X-PAYMENTS-SIGNATURE' : FUZZ_HMAC.header,
        hmacSignature(FUZZ_HMAC.secrets[secretIndex], timestamp, body),
      ],
    ],
  };
}

const isSignatureHeader = (name: string) => ['webhook-signature', FUZZ_HMAC.header].includes(name.toLowerCase());
const isTimestampHeader = (name: string) =>
  ['webhook-timestamp', FUZZ_HMAC.timestampHeader].includes(name.toLowerCase());

function mutate(target: FuzzScheme, parts: SignedParts, mutation: MutationSpec): SignedParts {
  const headers = parts.headers.map(([n, v]) => [n, v] as [string, string]);
  let body = Buffer.from(parts.body);
  const signatureAt = headers.findIndex(([n]) => isSignatureHeader(n));
  const timestampAt = headers.findIndex(([n]) => isTimestampHeader(n));
  const flipSignature = (at: number, shift: number) => {
    const [name, value] = headers[signatureAt]!;
    if (target === 'standard') {
      // Characters 0..41 of a 44-character base64 digest carry 6 significant bits each: any change changes the bytes.
      const digest = value.slice(3);
      const i = at % 42;
      const changed = BASE64[(BASE64.indexOf(digest[i]!) + shift) % 64]!;
      headers[signatureAt] = [name, `v1,${digest.slice(0, i)}${changed}${digest.slice(i + 1)}`];
    } else {
      const digest = value.slice(FUZZ_HMAC.prefix.length);
      const i = at % digest.length;
      const changed = HEX[(HEX.indexOf(digest[i]!) + shift) % 16]!;
      headers[signatureAt] = [name, `${FUZZ_HMAC.prefix}${digest.slice(0, i)}${changed}${digest.slice(i + 1)}`];
    }
  };
  switch (mutation.op) {
    case 'flipBody':
      if (body.length === 0) body = Buffer.from([mutation.xor]);
      else body[mutation.at % body.length]! ^= mutation.xor;
      break;
    case 'truncateBody':
      body = body.length === 0 ? Buffer.from('x') : body.subarray(0, Math.max(0, body.length - mutation.by));
      break;
    case 'appendBody':
      body = Buffer.concat([body, Buffer.from(mutation.bytes)]);
      break;
    case 'flipSignature':
      flipSignature(mutation.at, mutation.shift);
      break;
    case 'shiftTimestamp': {
      const [name, value] = headers[timestampAt]!;
      headers[timestampAt] = [name, String(Number(value) + mutation.by)];
      break;
    }
    case 'changeId': {
      const idAt = headers.findIndex(([n]) => n.toLowerCase() === 'webhook-id');
      if (idAt >= 0 && headers[idAt]![1] !== mutation.id) headers[idAt] = [headers[idAt]![0], mutation.id];
      else flipSignature(mutation.id.charCodeAt(0), 1 + (mutation.id.charCodeAt(1) % 15));
      break;
    }
    case 'dropHeader': {
      const which = mutation.which === 'id' && target === 'hmac' ? 'signature' : mutation.which;
      const drop =
        which === 'signature'
          ? signatureAt
          : which === 'timestamp'
            ? timestampAt
            : headers.findIndex(([n]) => n.toLowerCase() === 'webhook-id');
      headers.splice(drop, 1);
      break;
    }
    case 'wrongVersion': {
      const [name, value] = headers[signatureAt]!;
      if (target === 'standard') {
        const tag = mutation.tag.endsWith('=') ? 'v2' : mutation.tag;
        headers[signatureAt] = [name, `${tag},${value.slice(3)}`];
      } else {
        const tag = mutation.tag.endsWith('=') ? mutation.tag : '';
        headers[signatureAt] = [name, `${tag}${value.slice(FUZZ_HMAC.prefix.length)}`];
      }
      break;
    }
    case 'duplicateTimestamp': {
      const [name, value] = headers[timestampAt]!;
      headers.splice(timestampAt + 1, 0, [name, String(Number(value) + mutation.by)]);
      break;
    }
  }
  return { headers, body };
}

function signatureHeaders(
  target: FuzzScheme,
  spec: SignatureSpec,
  body: Buffer,
  msgId: string,
  nowSeconds: number,
): { parts: SignedParts; signatureValid: boolean } {
  switch (spec.kind) {
    case 'valid': {
      const parts = signValid(
        target,
        body,
        msgId,
        spec.secretIndex,
        String(nowSeconds + spec.skewSeconds),
        spec.mixedCaseNames,
      );
      const signatureAt = parts.headers.findIndex(([n]) => isSignatureHeader(n));
      const [name, value] = parts.headers[signatureAt]!;
      if (target === 'standard' && spec.junkEntries.length > 0) {
        const middle = Math.floor(spec.junkEntries.length / 2);
        parts.headers[signatureAt] = [
          name,
          [...spec.junkEntries.slice(0, middle), value, ...spec.junkEntries.slice(middle)].join(' '),
        ];
      } else if (target === 'hmac' && spec.upperHex) {
        parts.headers[signatureAt] = [name, `${FUZZ_HMAC.prefix}${value.slice(FUZZ_HMAC.prefix.length).toUpperCase()}`];
      }
      return { parts, signatureValid: true };
    }
    case 'mutated':
      return {
        parts: mutate(
          target,
          signValid(target, body, msgId, spec.secretIndex, String(nowSeconds + spec.skewSeconds), false),
          spec.mutation,
        ),
        signatureValid: false,
      };
    case 'none':
      return { parts: { headers: [], body }, signatureValid: false };
    case 'junk':
      return { parts: { headers: spec.headers, body }, signatureValid: false };
    case 'foreign': {
      const timestamp = String(nowSeconds + spec.skewSeconds);
      const headers: Array<[string, string]> =
        target === 'standard'
          ? [
              ['webhook-id', msgId],
              ['webhook-timestamp', timestamp],
              ['webhook-signature', standardSignature(FUZZ_FOREIGN_STANDARD_SECRET, msgId, timestamp, body)],
            ]
          : [
              [FUZZ_HMAC.timestampHeader, timestamp],
              [FUZZ_HMAC.header, hmacSignature(FUZZ_HMAC.foreignSecret, timestamp, body)],
            ];
      return { parts: { headers, body }, signatureValid: false };
    }
    case 'stale':
      // A correct signature, but the timestamp is far outside the window (a replay): invalid.
      return {
        parts: signValid(target, body, msgId, 0, String(nowSeconds + spec.skewSeconds), false),
        signatureValid: false,
      };
    case 'malformedTimestamp': {
      const parts = signValid(target, body, msgId, 0, spec.value, false);
      return { parts, signatureValid: false };
    }
  }
}

function rawMessage(spec: RawJunkSpec, port: number): Buffer {
  const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;
  const start = [
    `POST ${WEBHOOK_PATH} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    'Connection: close',
  ];
  switch (spec.kind) {
    case 'badRequestLine':
      return Buffer.from(head([spec.line, `Host: 127.0.0.1:${port}`, 'Connection: close']), 'latin1');
    case 'badContentLength':
      return Buffer.from(head([...start, `Content-Length: ${spec.value}`]) + spec.body, 'utf8');
    case 'shortBody':
      return Buffer.from(head([...start, `Content-Length: ${spec.declared}`]) + spec.body, 'utf8');
    case 'badChunked':
      return Buffer.from(
        `${head([...start, 'Transfer-Encoding: chunked'])}${spec.sizeLine}\r\n${spec.body}\r\n0\r\n\r\n`,
        'utf8',
      );
    case 'lengthAndChunked': {
      const length = Buffer.byteLength(spec.body);
      return Buffer.from(
        `${head([...start, `Content-Length: ${length + 10}`, 'Transfer-Encoding: chunked'])}${length.toString(16)}\r\n${spec.body}\r\n0\r\n\r\n`,
        'utf8',
      );
    }
    case 'garbage':
      return Buffer.from(spec.bytes);
    case 'headerFlood':
      return Buffer.from(
        head([
          ...start,
          ...Array.from({ length: spec.count }, (_, i) => `X-Flood-${i}: ${'v'.repeat(16)}`),
          'Content-Length: 2',
        ]) + '{}',
        'utf8',
      );
  }
}

/**
 * Turns a case into bytes on the wire and the receiver's duty. `sequence` numbers the case (message
 * ids of non-event bodies); `recent` holds valid events to replay; `nowSeconds` is the signing clock.
 */
export function buildRequest(
  spec: FuzzCaseSpec,
  context: { sequence: number; nowSeconds: number; port: number; recent: readonly ReplayableEvent[] },
): BuiltRequest {
  if (spec.category === 'rawJunk' && spec.raw) {
    return {
      target: spec.target,
      method: 'POST',
      path: WEBHOOK_PATH,
      headers: [],
      body: Buffer.alloc(0),
      transport: 'raw',
      chunkSizes: [],
      rawMessage: rawMessage(spec.raw, context.port),
      expect: {
        signatureValid: false,
        accepted: false,
        eventId: undefined,
        eventType: undefined,
        failing: false,
        exactStatus: undefined,
        frameworkMayRefuse: true,
      },
    };
  }

  let target = spec.target;
  let body: Buffer;
  if (spec.category === 'replay' && context.recent.length > 0) {
    const entry = context.recent[spec.replayPick % context.recent.length]!;
    target = entry.target;
    body = entry.body;
  } else {
    body = bodyBytes(spec.body, context.sequence);
  }
  const verdictBeforeSigning = judgePayload(body);
  const msgId = verdictBeforeSigning.valid ? verdictBeforeSigning.id : `msg_fuzz_${context.sequence}`;
  const { parts, signatureValid } = signatureHeaders(target, spec.signature, body, msgId, context.nowSeconds);
  body = parts.body;

  const headers: Array<[string, string]> = [];
  if (spec.contentType !== null) headers.push(['Content-Type', spec.contentType]);
  headers.push(...parts.headers, ...spec.extraHeaders);

  const verdict = judgePayload(body);
  const oversize = isOversize(body);
  const accepted = signatureValid && !oversize && verdict.valid && verdict.endpointAllowed && spec.method === 'POST';
  const routed = ROUTED_PATHS.has(spec.path) && spec.method === 'POST';
  const pollutes = body.includes('"__proto__"') || body.includes('"constructor"');
  const safeType = spec.contentType !== null && SAFE_JSON_CONTENT_TYPES.includes(spec.contentType);
  const frameworkMayRefuse = !routed || !safeType || pollutes;
  let exactStatus: number | undefined;
  if (accepted && verdict.valid) exactStatus = verdict.failing && boundHandlers(verdict.type).length > 0 ? 500 : 200;

  return {
    target,
    method: spec.method,
    path: spec.path,
    headers,
    body,
    transport: spec.transport,
    chunkSizes: spec.chunkSizes,
    rawMessage: undefined,
    expect: {
      signatureValid,
      accepted,
      eventId: verdict.valid ? verdict.id : undefined,
      eventType: verdict.valid ? verdict.type : undefined,
      failing: verdict.valid && verdict.failing,
      exactStatus,
      frameworkMayRefuse,
    },
  };
}
