import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { MemoryIdempotencyStore, PaymentEventsDispatcher, PaymentEventsRegistry, type PaymentsRuntime } from '../../../lib/index.js';
import { validatePaymentsOptions } from '../../../lib/payments-options.validator.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../fixtures/webhooks/webhook-app.fixture.js';

const runtime: PaymentsRuntime = { now: () => 1_000, sleep: async () => undefined, random: () => 0.5 };
const noIntents = {
  paymentIntents: { retrieve: async () => ({ id: 'x', state: 'succeeded' }) },
  setupIntents: { retrieve: async () => ({ id: 'y', state: 'succeeded' }) },
};

// A line per handled delivery at 'log' level cost 6-12 % of the receiver's CPU in bench/ (Nest's
// console logger formats a timestamp and writes synchronously): success is logged at debug.
describe('PaymentEventsDispatcher log level of a handled delivery', () => {
  const logger = new CapturingLogger();
  beforeAll(() => Logger.overrideLogger(logger));
  afterAll(() => Logger.overrideLogger(new CapturingLogger()));

  it("logs a handled delivery at debug, not at 'log'", async () => {
    const registry = new PaymentEventsRegistry();
    registry.register({ id: 'A.paid', patterns: ['payment_intent.succeeded'], invoke: () => undefined });
    const options = validatePaymentsOptions(fixtureOptions());
    const dispatcher = new PaymentEventsDispatcher(registry, new MemoryIdempotencyStore(), options.webhooks, runtime, noIntents);
    const event = createPaymentEvent('payment_intent.succeeded');
    logger.clear();

    expect((await dispatcher.dispatch(event, { receivedAt: new Date() })).outcome).toBe('handled');

    expect(logger.messages('debug').some((line) => line.startsWith(`Handled event ${event.id}`))).toBe(true);
    expect(logger.messages('log').filter((line) => line.includes(event.id))).toEqual([]);
  });
});
