import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { PaymentEventsRegistry } from '../../../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { PaymentsTelemetry } from '../../../../lib/telemetry/payments.telemetry.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { OtelTestSdk } from '../../../fixtures/telemetry/otel-sdk.fixture.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { deferred, until } from '../../../fixtures/webhooks/deferred.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';
import { ScriptedRenewStore } from '../../../fixtures/webhooks/scripted-renew.store.js';

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

  const runSlowHandlerOver = async (store: ScriptedRenewStore, renewals: number): Promise<void> => {
    const registry = new PaymentEventsRegistry();
    const options = validatePaymentsOptions(fixtureOptions({ claimTtlSeconds: 1 }));
    const dispatcher = new PaymentEventsDispatcher(
      registry,
      store,
      options.webhooks as Exclude<typeof options.webhooks, false>,
      runtime,
      noIntents,
      telemetry,
    );
    const gate = deferred();
    registry.register({ id: 'Slow.run', patterns: ['charge.succeeded'], invoke: () => gate.promise });
    const dispatched = dispatcher.dispatch(createPaymentEvent('charge.succeeded'), { receivedAt: new Date() });
    await until(() => store.renewals.length >= renewals, `${renewals} renewal(s)`);
    gate.resolve();
    await dispatched;
  };

  it('counts a lost lease in payments.handler.leases_lost, by handler id', async () => {
    await runSlowHandlerOver(new ScriptedRenewStore('lost'), 1);
    expect(await sdk.points('payments.handler.leases_lost')).toEqual([
      { attributes: { 'payments.handler.id': 'Slow.run' }, value: 1 },
    ]);
  });

  it('counts a failed renewal in payments.store.errors with operation renew', async () => {
    await runSlowHandlerOver(new ScriptedRenewStore('error'), 2);
    const points = await sdk.points('payments.store.errors');
    expect(points).toHaveLength(1);
    expect(points[0]!.attributes).toEqual({ 'payments.store.operation': 'renew' });
    expect(points[0]!.value).toBeGreaterThanOrEqual(2);
    expect(await sdk.points('payments.handler.leases_lost')).toEqual([]);
  });
});
