import 'reflect-metadata';
import { Inject, Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import {
  MemoryIdempotencyStore,
  OnPaymentEvent,
  PaymentsModule,
  hmacVerifier,
  standardWebhooksVerifier,
  type PaymentEvent,
  type WebhookVerifier,
} from '../../../lib/index.js';
import type { AuditLogger } from '../support/audit.logger.js';
import { leakAudit } from '../support/leak-audit.js';

export type FuzzAdapter = 'express' | 'fastify';
export type FuzzScheme = 'standard' | 'hmac';

/** The fuzz apps' API key (never used to call anything; only searched for by the leak audit). */
export const FUZZ_API_KEY = 'sk_test_FUZZCANARY_3b9e1c7d5a2f4860';

/** Standard Webhooks secrets of the fuzz receivers (two: rotation), and one they do not know. */
export const FUZZ_STANDARD_SECRETS = [
  `whsec_${Buffer.from('fuzz-standard-secret-current-32b').toString('base64')}`,
  `whsec_${Buffer.from('fuzz-standard-secret-previous-32').toString('base64')}`,
] as const;
export const FUZZ_FOREIGN_STANDARD_SECRET = `whsec_${Buffer.from('fuzz-standard-secret-foreign-32b').toString('base64')}`;

/** The HMAC scheme of the other fuzz receivers: sha256 hex, `sha256=` prefix, `${timestamp}.${body}` signed. */
export const FUZZ_HMAC = {
  secrets: ['fuzz-hmac-secret-current-7d41', 'fuzz-hmac-secret-previous-2c93'] as const,
  foreignSecret: 'fuzz-hmac-secret-foreign-9a08',
  header: 'x-payments-signature',
  timestampHeader: 'x-payments-timestamp',
  prefix: 'sha256=',
} as const;

/** The only endpoint id the fuzz receivers accept (`endpointIds`). */
export const FUZZ_ENDPOINT_ID = '5e0c9a51-7d3b-4f26-8a1e-2c4b6d8f0a13';

/** Smaller than the default so that 413 is cheap to reach. */
export const FUZZ_MAX_BODY_BYTES = 16 * 1024;

/** Tolerance of both verifiers (the default); generators keep 100 s away from its edges. */
export const FUZZ_TOLERANCE_SECONDS = 300;

/** Handler names of the fuzz apps, and which event types each is bound to. */
export type FuzzHandlerName = 'any' | 'succeeded';

/** Per event id: how often each handler was invoked and how often it returned. */
export interface FuzzRunCount {
  invoked: number;
  completed: number;
}

/**
 * What the fuzz handlers saw. Handlers throw (after being counted) when the event's metadata carries
 * `fuzz_fail: true`: the injected handler failure that alone may answer 500.
 */
export class FuzzEventRecorder {
  invocations = 0;
  readonly byEvent = new Map<string, Record<FuzzHandlerName, FuzzRunCount>>();

  run(handler: FuzzHandlerName, event: PaymentEvent): void {
    this.invocations += 1;
    let entry = this.byEvent.get(event.id);
    if (!entry) {
      entry = { any: { invoked: 0, completed: 0 }, succeeded: { invoked: 0, completed: 0 } };
      this.byEvent.set(event.id, entry);
    }
    entry[handler].invoked += 1;
    const metadata = event.metadata as { fuzz_fail?: unknown } | null;
    if (metadata !== null && metadata.fuzz_fail === true) {
      const failure = new Error(`injected fuzz failure in ${handler} handler`);
      leakAudit.scanError(failure, 'injected fuzz failure');
      throw failure;
    }
    entry[handler].completed += 1;
  }
}

const RECORDER = Symbol('FuzzEventRecorder');

/** Bound to every documented event type. */
@Injectable()
export class FuzzAnyEventHandler {
  constructor(@Inject(RECORDER) private readonly recorder: FuzzEventRecorder) {}

  @OnPaymentEvent('*')
  onAny(event: PaymentEvent): void {
    this.recorder.run('any', event);
  }
}

/** Bound to `payment_intent.succeeded` only (two handlers for that type). */
@Injectable()
export class FuzzSucceededHandler {
  constructor(@Inject(RECORDER) private readonly recorder: FuzzEventRecorder) {}

  @OnPaymentEvent('payment_intent.succeeded')
  onSucceeded(event: PaymentEvent<'payment_intent.succeeded'>): void {
    this.recorder.run('succeeded', event);
  }
}

export interface FuzzReceiver {
  adapter: FuzzAdapter;
  scheme: FuzzScheme;
  app: INestApplication;
  port: number;
  recorder: FuzzEventRecorder;
  close(): Promise<void>;
}

function verifierFor(scheme: FuzzScheme): WebhookVerifier {
  if (scheme === 'standard')
    return standardWebhooksVerifier({ secrets: [...FUZZ_STANDARD_SECRETS], toleranceSeconds: FUZZ_TOLERANCE_SECONDS });
  return hmacVerifier({
    secrets: [...FUZZ_HMAC.secrets],
    header: FUZZ_HMAC.header,
    prefix: FUZZ_HMAC.prefix,
    timestampHeader: FUZZ_HMAC.timestampHeader,
    signedPayload: 'timestamp.body',
    toleranceSeconds: FUZZ_TOLERANCE_SECONDS,
  });
}

/**
 * Boots one receiver under fuzz: a real Nest app (Express or Fastify, `rawBody: true`) listening on
 * 127.0.0.1, PaymentsModule with one verifier scheme, `endpointIds`, a small `maxBodyBytes`, a
 * memory store bounded at 5000 keys (so its memory plateaus), and the two recording handlers.
 */
export async function startFuzzReceiver(
  adapter: FuzzAdapter,
  scheme: FuzzScheme,
  logger: AuditLogger,
): Promise<FuzzReceiver> {
  const recorder = new FuzzEventRecorder();

  @Module({
    imports: [
      PaymentsModule.forRoot({
        apiKey: FUZZ_API_KEY,
        environment: 'sandbox',
        baseUrl: 'https://sandbox.payments.test',
        webhooks: {
          verifier: verifierFor(scheme),
          endpointIds: [FUZZ_ENDPOINT_ID],
          maxBodyBytes: FUZZ_MAX_BODY_BYTES,
          store: new MemoryIdempotencyStore({ maxEntries: 5000 }),
        },
      }),
    ],
    providers: [FuzzAnyEventHandler, FuzzSucceededHandler, { provide: RECORDER, useValue: recorder }],
  })
  class FuzzReceiverAppModule {}

  const app = await NestFactory.create(
    FuzzReceiverAppModule,
    adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
    {
      rawBody: true,
      logger,
      abortOnError: false,
    },
  );
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { adapter, scheme, app, port, recorder, close: () => app.close() };
}
