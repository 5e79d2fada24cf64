import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  MemoryIdempotencyStore,
  PaymentsConfigurationError,
  PaymentsModule,
  type PaymentEvent,
} from '../../../lib/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { deferred, until } from '../../fixtures/webhooks/deferred.js';
import {
  FulfilmentHandler,
  PAYMENT_HANDLER_FIXTURES,
  PaymentAuditHandler,
} from '../../fixtures/webhooks/payment-handlers.fixture.js';
import {
  ENDPOINT_ID,
  fixtureOptions,
  post,
  sign,
  startWebhookApp,
  type AdapterName,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';

const PATH = 'payments/webhooks';

/** The same event id in other cases: a UUID is case-insensitive, so each is a redelivery. */
const caseVariants = (id: string): string[] => [
  id.toUpperCase(),
  id
    .split('')
    .map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c))
    .join(''),
];

/** Opens a raw connection to `baseUrl` and writes `head` plus the first `partial` bytes of a body that announced more. */
function startPost(
  baseUrl: string,
  { contentType, declared, partial }: { contentType: string; declared: number; partial: number },
): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST /${PATH} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: ${contentType}\r\nContent-Length: ${declared}\r\n` +
          `webhook-id: msg_1\r\nwebhook-timestamp: ${Math.floor(Date.now() / 1000)}\r\nwebhook-signature: v1,AAAA\r\n\r\n`,
      );
      socket.write(Buffer.alloc(partial, '{'), () => resolve(socket));
    });
    socket.on('error', reject);
  });
}

/** Reads the whole answer of a socket until the server closes it. */
function readAll(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

describe.each(['express', 'fastify'] as const)('case-variant event ids on %s', (adapter: AdapterName) => {
  const logger = new CapturingLogger();
  let app: WebhookApp;
  let url: string;
  let fulfilment: FulfilmentHandler;
  let audit: PaymentAuditHandler;

  beforeAll(async () => {
    app = await startWebhookApp({
      adapter,
      logger,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(
        fixtureOptions({ store: new MemoryIdempotencyStore(), endpointIds: [ENDPOINT_ID], requireHttps: false }),
      ),
    });
    url = `${app.baseUrl}/${PATH}`;
    fulfilment = app.app.get(FulfilmentHandler);
    audit = app.app.get(PaymentAuditHandler);
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(() => {
    fulfilment.reset();
    audit.reset();
  });

  it('[W4] a redelivery of the same id in upper or mixed case is a duplicate: no handler runs again', async () => {
    const event = createPaymentEvent('payment_intent.succeeded', { webhook_id: ENDPOINT_ID });
    expect((await post(url, sign(event))).body).toEqual({ received: true, outcome: 'handled' });
    for (const id of caseVariants(event.id)) {
      expect(await post(url, sign({ ...event, id }))).toEqual({
        status: 200,
        body: { received: true, outcome: 'duplicate' },
      });
    }
    expect(fulfilment.calls).toHaveLength(1);
    expect(audit.calls).toHaveLength(1);
  });

  it('[W4] the first delivery in upper case runs the handlers once, with the canonical (lower-case) id in the event and the logs', async () => {
    const event = createPaymentEvent('payment_intent.succeeded', { webhook_id: ENDPOINT_ID.toUpperCase() });
    const upper = event.id.toUpperCase();
    logger.clear();
    expect((await post(url, sign({ ...event, id: upper }))).body).toEqual({ received: true, outcome: 'handled' });
    expect((await post(url, sign(event))).body).toEqual({ received: true, outcome: 'duplicate' });
    expect(fulfilment.calls.map((call) => call.eventId)).toEqual([event.id]);
    expect(logger.text()).not.toContain(upper);
  });

  it('[W4] a case variant of an id in flight answers 409: the handler does not run concurrently', async () => {
    const event = createPaymentEvent('payment_intent.succeeded', { webhook_id: ENDPOINT_ID });
    const gate = deferred();
    fulfilment.behaviour = () => gate.promise;
    const first = post(url, sign(event));
    await until(() => fulfilment.calls.length === 1, 'the first delivery to start the handler');
    expect((await post(url, sign({ ...event, id: event.id.toUpperCase() }))).status).toBe(409);
    gate.resolve();
    expect((await first).status).toBe(200);
    expect(fulfilment.calls).toHaveLength(1);
  });
});

describe('a full memory store answers 503 and never runs a copy of a running event', () => {
  const logger = new CapturingLogger();
  let app: WebhookApp;
  let url: string;
  let fulfilment: FulfilmentHandler;
  beforeAll(async () => {
    // Two handlers bound to payment_intent.succeeded, both runs in the intent's one record: the slow
    // event's record, in use while it runs, is the whole store.
    app = await startWebhookApp({
      adapter: 'express',
      logger,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(
        fixtureOptions({ store: new MemoryIdempotencyStore({ maxEntries: 1 }), requireHttps: false }),
      ),
    });
    url = `${app.baseUrl}/${PATH}`;
    fulfilment = app.app.get(FulfilmentHandler);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('[W4] other events during a slow handler are refused with 503; the running one is still busy, then done once', async () => {
    const slow = createPaymentEvent('payment_intent.succeeded');
    const gate = deferred();
    fulfilment.behaviour = (event) => (event.id === slow.id ? gate.promise : undefined);
    const first = post(url, sign(slow));
    await until(() => fulfilment.calls.length === 1, 'the slow handler to start');
    for (let i = 0; i < 5; i += 1) {
      expect((await post(url, sign(createPaymentEvent('payment_intent.succeeded')))).status).toBe(503);
    }
    expect((await post(url, sign(slow))).status).toBe(409);
    gate.resolve();
    expect((await first).status).toBe(200);
    expect((await post(url, sign(slow))).body).toEqual({ received: true, outcome: 'duplicate' });
    expect(fulfilment.callsFor(slow.id)).toHaveLength(1);
  });
});

/**
 * Every way an unauthenticated client can send a body the module (or the host's parsers on the
 * webhook route) reads, and then go away mid-body.
 */
const ABORT_CASES: Array<{
  name: string;
  adapter: AdapterName;
  bodyParser: boolean;
  rawBody: boolean;
  contentType: string;
}> = [
  {
    name: 'Express, bodyParser: false (the module reads the body)',
    adapter: 'express',
    bodyParser: false,
    rawBody: false,
    contentType: 'application/json',
  },
  {
    name: 'Express, rawBody: true, a non-JSON content type (the module reads the body)',
    adapter: 'express',
    bodyParser: true,
    rawBody: true,
    contentType: 'text/plain',
  },
  {
    name: 'Express, rawBody: true, JSON (the host app parser reads the body)',
    adapter: 'express',
    bodyParser: true,
    rawBody: true,
    contentType: 'application/json',
  },
  {
    name: 'Fastify, rawBody: true, JSON',
    adapter: 'fastify',
    bodyParser: true,
    rawBody: true,
    contentType: 'application/json',
  },
];

describe('aborted bodies', () => {
  const ABORTS = 20;
  let reports: AbortedBodiesReport[];
  beforeAll(async () => {
    // A plain Node child (see aborted-bodies.child.ts): in Jest's VM context Node's own errors fail
    // Nest's `instanceof Error`, which would make this test see lines a real app does not log.
    reports = await runAbortedBodiesChild({ CASES: JSON.stringify(ABORT_CASES), ABORTS: String(ABORTS) });
  }, 180_000);

  it.each(ABORT_CASES.map((spec, index) => ({ ...spec, index })))(
    `${ABORTS} clients that disconnect mid-body cause no error line, no stack and nothing on stderr, and reach no handler: $name`,
    ({ index }) => {
      expect(reports[index]).toEqual({
        errorLines: [],
        stackLines: 0,
        stderr: [],
        handlerCalls: 0,
        debugLines: expect.any(Number),
      });
    },
  );
});

interface AbortedBodiesReport {
  errorLines: string[];
  stackLines: number;
  stderr: string[];
  handlerCalls: number;
  debugLines: number;
}

function runAbortedBodiesChild(env: Record<string, string>): Promise<AbortedBodiesReport[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', './test/fixtures/redis/register-ts.mjs', './test/fixtures/webhooks/aborted-bodies.child.ts'],
      {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      const last = output.trim().split('\n').pop() ?? '';
      try {
        if (code !== 0) throw new Error(`exit code ${code}`);
        resolve(JSON.parse(last) as AbortedBodiesReport[]);
      } catch (error) {
        reject(new Error(`aborted-bodies child failed (${String(error)}): ${output.slice(-2000)}`));
      }
    });
  });
}

describe('slow bodies on the module body reader (Express, bodyParser: false)', () => {
  const logger = new CapturingLogger();
  let app: WebhookApp;
  beforeAll(async () => {
    app = await startWebhookApp({
      adapter: 'express',
      logger,
      bodyParser: false,
      rawBody: false,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(fixtureOptions({ requireHttps: false, bodyTimeoutMs: 300 })),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a body not complete within webhooks.bodyTimeoutMs is answered 408 and the connection closed, with no error line', async () => {
    logger.clear();
    const socket = await startPost(app.baseUrl, { contentType: 'application/json', declared: 4000, partial: 10 });
    const answer = await readAll(socket);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('{"received":false,"error":"request_timeout"}');
    expect(logger.messages('error')).toEqual([]);
    expect(logger.messages('warn')).toEqual([
      expect.stringMatching(/408 request_timeout: body not received within bodyTimeoutMs 300/),
    ]);
  });

  it('a complete body within the limit is verified as usual', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await post(`${app.baseUrl}/${PATH}`, sign(event))).status).toBe(200);
  });

  it('refuses a nonsensical webhooks.bodyTimeoutMs at boot, naming the option', async () => {
    const boot = startWebhookApp({
      adapter: 'express',
      logger: new CapturingLogger(),
      payments: PaymentsModule.forRoot(fixtureOptions({ bodyTimeoutMs: 0 })),
    });
    await expect(boot).rejects.toThrow(PaymentsConfigurationError);
    await expect(boot).rejects.toThrow(/`webhooks\.bodyTimeoutMs`/);
  });
});

describe('refusal log lines are sampled', () => {
  const logger = new CapturingLogger();
  let app: WebhookApp;
  beforeAll(async () => {
    app = await startWebhookApp({
      adapter: 'express',
      logger,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(fixtureOptions({ requireHttps: false })),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('[W5] 200 forged deliveries cost at most the first 10 warn lines of their reason, and every one is still refused', async () => {
    logger.clear();
    const event: PaymentEvent = createPaymentEvent('payment_intent.succeeded');
    const forged = sign(event, {
      secret: `whsec_${Buffer.from('not-the-endpoint-secret-32bytes!').toString('base64')}`,
    });
    for (let i = 0; i < 200; i += 1) {
      expect((await post(`${app.baseUrl}/${PATH}`, forged)).status).toBe(401);
    }
    const warns = logger.messages('warn').filter((line) => line.includes('invalid_signature'));
    expect(warns).toHaveLength(10);
    expect(logger.messages('error')).toEqual([]);
  });
});
