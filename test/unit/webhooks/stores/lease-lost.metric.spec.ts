import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  MemoryIdempotencyStore,
  PaymentEventsRegistry,
  type IdempotencyClaim,
  type IdempotencyStore,
  type PaymentsRuntime,
} from '../../../../lib/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/payment-events.dispatcher.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { PaymentsTelemetry } from '../../../../lib/telemetry/payments.telemetry.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { OtelTestSdk } from '../../../fixtures/telemetry/otel-sdk.fixture.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { deferred, until } from '../../../fixtures/webhooks/deferred.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

/** A store whose renewals answer as scripted (the claim is lost, or the engine is down). */
class RenewingAs implements IdempotencyStore {
  readonly inner = new MemoryIdempotencyStore();
  renewals = 0;
  constructor(private readonly answer: 'lost' | 'error') {}
  claim(key: string, leaseMs: number): Promise<IdempotencyClaim> {
    return this.inner.claim(key, leaseMs);
  }
  complete(key: string, token: string, retentionMs: number): Promise<void> {
    return this.inner.complete(key, token, retentionMs);
  }
  release(key: string, token: string): Promise<void> {
    return this.inner.release(key, token);
  }
  async renew(): Promise<boolean> {
    this.renewals += 1;
    if (this.answer === 'error') throw new Error('store down');
    return false;
  }
}

const runtime: PaymentsRuntime = { now: () => Date.now(), sleep: async () => undefined, random: () => 0.5 };
const noIntents = {
  paymentIntents: { retrieve: async () => ({ id: 'x', state: 'succeeded' }) },
  setupIntents: { retrieve: async () => ({ id: 'y', state: 'succeeded' }) },
};

describe('lease renewal metrics (OpenTelemetry SDK installed)', () => {
  const sdk = new OtelTestSdk();
  let telemetry: PaymentsTelemetry;
  beforeAll(() => {
    Logger.overrideLogger(new CapturingLogger());
  });
  beforeEach(async () => {
    // Fresh instruments on a fresh meter provider for each case.
    await sdk.resetMetrics();
    telemetry = await PaymentsTelemetry.load();
  });
  afterAll(async () => {
    await sdk.shutdown();
  });

  const runSlowHandlerOver = async (store: RenewingAs, renewals: number): Promise<void> => {
    const registry = new PaymentEventsRegistry();
    const options = validatePaymentsOptions(fixtureOptions({ claimTtlSeconds: 1 }));
    const dispatcher = new PaymentEventsDispatcher(registry, store, options.webhooks, runtime, noIntents, telemetry);
    const gate = deferred();
    registry.register({ id: 'Slow.run', patterns: ['payment_intent.succeeded'], invoke: () => gate.promise });
    const dispatched = dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt: new Date() });
    await until(() => store.renewals >= renewals, `${renewals} renewal(s)`);
    gate.resolve();
    await dispatched;
  };

  it('counts a lost lease in payments.handler.leases_lost, by handler id', async () => {
    await runSlowHandlerOver(new RenewingAs('lost'), 1);
    expect(await sdk.points('payments.handler.leases_lost')).toEqual([
      { attributes: { 'payments.handler.id': 'Slow.run' }, value: 1 },
    ]);
  });

  it('counts a failed renewal in payments.store.errors with operation renew', async () => {
    await runSlowHandlerOver(new RenewingAs('error'), 2);
    const points = await sdk.points('payments.store.errors');
    expect(points).toHaveLength(1);
    expect(points[0]!.attributes).toEqual({ 'payments.store.operation': 'renew' });
    expect(points[0]!.value).toBeGreaterThanOrEqual(2);
    expect(await sdk.points('payments.handler.leases_lost')).toEqual([]);
  });
});
