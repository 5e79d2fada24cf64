import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { MemoryIdempotencyStore, PaymentsConfigurationError } from '../../../../lib/index.js';
import { type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { PaymentEventsRegistry } from '../../../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

let clock = 1_000;
const runtime: PaymentsRuntime = { now: () => clock, sleep: async () => undefined, random: () => 0.5 };
const noIntents = {
  paymentIntents: { retrieve: async () => ({ id: 'x', state: 'succeeded' }) },
  setupIntents: { retrieve: async () => ({ id: 'y', state: 'succeeded' }) },
};

// Nest 12's default logger prints every level, debug included, so a per-delivery debug line is a
// per-delivery line for every default app (and its formatting cost, bench/NOTES.md). The policy
// (docs/logging.md): a delivery that goes well logs nothing unless `webhooks.logDeliveries` is on,
// which logs one compact line per dispatch; what needs attention is logged either way.
describe('log policy of the receiver (per delivery)', () => {
  const logger = new CapturingLogger();
  beforeAll(() => Logger.overrideLogger(logger));
  afterAll(() => Logger.overrideLogger(new CapturingLogger()));
  beforeEach(() => logger.clear());

  function dispatcherWith(
    logDeliveries: boolean | undefined,
    handlers: Array<() => unknown> = [() => undefined],
  ): PaymentEventsDispatcher {
    const registry = new PaymentEventsRegistry();
    handlers.forEach((invoke, index) =>
      registry.register({ id: `H.h${index}`, patterns: ['payment_intent.succeeded'], invoke }),
    );
    const options = validatePaymentsOptions(fixtureOptions(logDeliveries === undefined ? {} : { logDeliveries }));
    return new PaymentEventsDispatcher(
      registry,
      new MemoryIdempotencyStore({ now: runtime }),
      options.webhooks as Exclude<typeof options.webhooks, false>,
      runtime,
      noIntents,
    );
  }
  const linesAbout = (id: string): Array<{ level: string; message: string }> =>
    logger.lines.filter((line) => line.message.includes(id));

  it('by default, a handled delivery logs nothing at any level, debug included', async () => {
    const dispatcher = dispatcherWith(undefined, [() => undefined, () => undefined]);
    const event = createPaymentEvent('payment_intent.succeeded');

    expect((await dispatcher.dispatch(event, { receivedAt: new Date() })).outcome).toBe('handled');

    expect(linesAbout(event.id)).toEqual([]);
  });

  it('by default, a redelivery of a finished event logs one line at log level (the service missed our 200)', async () => {
    const dispatcher = dispatcherWith(undefined);
    const event = createPaymentEvent('payment_intent.succeeded');
    await dispatcher.dispatch(event, { receivedAt: new Date() });

    expect((await dispatcher.dispatch(event, { receivedAt: new Date() })).outcome).toBe('duplicate');

    expect(linesAbout(event.id)).toEqual([
      {
        level: 'log',
        context: 'PaymentsWebhooks',
        message: `Event ${event.id} (payment_intent.succeeded) is a duplicate: every handler had already completed it`,
      },
    ]);
  });

  it('by default, a failed handler is still logged at error level, with event and handler', async () => {
    const dispatcher = dispatcherWith(undefined, [
      () => {
        throw new Error('warehouse offline');
      },
    ]);
    const event = createPaymentEvent('payment_intent.succeeded');

    expect((await dispatcher.dispatch(event, { receivedAt: new Date() })).outcome).toBe('failed');

    const errors = logger.messages('error').filter((line) => line.includes(event.id));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`Failed event ${event.id} (payment_intent.succeeded) handler H.h0`);
  });

  it('with logDeliveries, one log line per dispatch names event, type, outcome, each handler, its status and duration', async () => {
    const dispatcher = dispatcherWith(true, [
      () => {
        clock += 3;
      },
      () => undefined,
    ]);
    const event = createPaymentEvent('payment_intent.succeeded');

    await dispatcher.dispatch(event, { receivedAt: new Date() });

    expect(linesAbout(event.id)).toEqual([
      {
        level: 'log',
        context: 'PaymentsWebhooks',
        message: `Event ${event.id} (payment_intent.succeeded) handled: H.h0 done in 3 ms, H.h1 done in 0 ms`,
      },
    ]);
  });

  it('with logDeliveries, a redelivery logs its one line (duplicate, skipped), not a second one', async () => {
    const dispatcher = dispatcherWith(true);
    const event = createPaymentEvent('payment_intent.succeeded');
    await dispatcher.dispatch(event, { receivedAt: new Date() });
    logger.clear();

    await dispatcher.dispatch(event, { receivedAt: new Date() });

    expect(linesAbout(event.id).map((line) => [line.level, line.message])).toEqual([
      ['log', `Event ${event.id} (payment_intent.succeeded) duplicate: H.h0 skipped`],
    ]);
  });

  it('with logDeliveries, an event no handler listens to logs one line at log level', async () => {
    const dispatcher = dispatcherWith(true);
    const event = createPaymentEvent('charge.succeeded');

    expect((await dispatcher.dispatch(event, { receivedAt: new Date() })).outcome).toBe('unhandled');

    expect(linesAbout(event.id).map((line) => line.level)).toEqual(['log']);
  });

  it('webhooks.logDeliveries that is not a boolean fails at boot, naming the option', () => {
    expect(() => validatePaymentsOptions(fixtureOptions({ logDeliveries: 'yes' as unknown as boolean }))).toThrow(
      PaymentsConfigurationError,
    );
    expect(() => validatePaymentsOptions(fixtureOptions({ logDeliveries: 'yes' as unknown as boolean }))).toThrow(
      /webhooks\.logDeliveries/,
    );
  });
});
