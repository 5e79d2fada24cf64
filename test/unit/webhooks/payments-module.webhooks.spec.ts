import 'reflect-metadata';
import { afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  IdempotencyStore,
  MemoryIdempotencyStore,
  PaymentsConfigurationError,
  PaymentsModule,
} from '../../../lib/index.js';
import { PAYMENTS_WEBHOOK_ROUTE_METADATA } from '../../../lib/webhooks/index.js';
import { InlinePaymentEventsProcessor } from '../../../lib/webhooks/dispatch/inline-payment-events.processor.js';
import { PaymentEventsProcessor } from '../../../lib/webhooks/contracts/payment-events-processor.interface.js';
import { PaymentEventsEnqueuer } from '../../../lib/webhooks/queue/payment-events.enqueuer.js';
import { createPaymentsWebhookController } from '../../../lib/webhooks/receiver/payments-webhook.controller.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../fixtures/webhooks/webhook-app.fixture.js';

let moduleRef: TestingModule | undefined;
beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
afterEach(async () => {
  await moduleRef?.close();
  moduleRef = undefined;
});

const compile = async (payments: ReturnType<typeof PaymentsModule.forRoot>) => {
  moduleRef = await Test.createTestingModule({ imports: [payments] }).compile();
  return moduleRef;
};

describe('PaymentsModule webhook wiring', () => {
  it('uses the store given in options, and leaves it open at shutdown (the app owns it)', async () => {
    const store = new MemoryIdempotencyStore();
    const close = jest.spyOn(store, 'close');
    const ref = await compile(PaymentsModule.forRoot(fixtureOptions({ store })));
    expect(ref.get(IdempotencyStore)).toBe(store);
    await ref.close();
    moduleRef = undefined;
    expect(close).not.toHaveBeenCalled();
  });

  it('creates a MemoryIdempotencyStore by default, and closes it at shutdown', async () => {
    const ref = await compile(PaymentsModule.forRoot(fixtureOptions()));
    const store = ref.get<MemoryIdempotencyStore>(IdempotencyStore);
    expect(store).toBeInstanceOf(MemoryIdempotencyStore);
    const close = jest.spyOn(store, 'close');
    await ref.close();
    moduleRef = undefined;
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('processes inline by default', async () => {
    const ref = await compile(PaymentsModule.forRoot(fixtureOptions()));
    expect(ref.get(PaymentEventsProcessor)).toBeInstanceOf(InlinePaymentEventsProcessor);
  });

  it('uses the BullMQ processor when processing is { queue }', async () => {
    const ref = await compile(
      PaymentsModule.forRoot(
        fixtureOptions({
          processing: { queue: { connection: { host: '127.0.0.1', port: 6379, lazyConnect: true }, worker: false } },
        }),
      ),
    );
    expect(ref.get(PaymentEventsProcessor)).toBeInstanceOf(PaymentEventsEnqueuer);
  });

  it('[W8] fails at boot without a verifier (there is no default scheme)', async () => {
    const options = fixtureOptions();
    const { verifier: _none, ...webhooks } = options.webhooks as Exclude<typeof options.webhooks, false | undefined>;
    await expect(compile(PaymentsModule.forRoot({ ...options, webhooks: webhooks as never }))).rejects.toThrow(
      /webhooks\.verifier/,
    );
  });

  it('forRootAsync: a factory path that differs from receiver.path fails at boot, naming receiver.path and the fix', async () => {
    const attempt = Test.createTestingModule({
      imports: [
        PaymentsModule.forRootAsync({
          receiver: { path: 'hooks' },
          useFactory: () => fixtureOptions({ path: '/other/' }),
        }),
      ],
    }).compile();
    await expect(attempt).rejects.toThrow(PaymentsConfigurationError);
    await expect(
      Test.createTestingModule({
        imports: [
          PaymentsModule.forRootAsync({
            receiver: { path: 'hooks' },
            useFactory: () => fixtureOptions({ path: '/other/' }),
          }),
        ],
      }).compile(),
    ).rejects.toThrow(
      "Invalid PaymentsModule option `receiver.path`: is 'hooks', but the options factory sets webhooks.path 'other'",
    );
  });

  it('forRootAsync: a factory path equal to receiver.path (slashes aside) boots', async () => {
    moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRootAsync({
          receiver: { path: '/hooks/' },
          useFactory: () => fixtureOptions({ path: 'hooks' }),
        }),
      ],
    }).compile();
    expect(moduleRef.get(IdempotencyStore)).toBeDefined();
  });

  it('forRootAsync: receiver false with a factory path fails at boot, naming receiver', async () => {
    await expect(
      Test.createTestingModule({
        imports: [
          PaymentsModule.forRootAsync({ receiver: false, useFactory: () => fixtureOptions({ path: 'hooks' }) }),
        ],
      }).compile(),
    ).rejects.toThrow(expect.objectContaining({ option: 'receiver' }) as unknown as Error);
  });

  it('builds a separate controller class per path, each marked as the payments webhook route', () => {
    const first = createPaymentsWebhookController('a/hooks');
    const second = createPaymentsWebhookController('b/hooks');
    expect(first).not.toBe(second);
    for (const controller of [first, second]) {
      expect(Reflect.getMetadata(PAYMENTS_WEBHOOK_ROUTE_METADATA, controller)).toBe(true);
      expect(
        Reflect.getMetadata(PAYMENTS_WEBHOOK_ROUTE_METADATA, (controller.prototype as { receive: object }).receive),
      ).toBe(true);
    }
  });

  it('registers no controller with webhooks: false, and one with webhooks on', () => {
    expect(PaymentsModule.forRoot(fixtureOptions(false)).controllers).toEqual([]);
    expect(PaymentsModule.forRoot(fixtureOptions()).controllers).toHaveLength(1);
    expect(PaymentsModule.forRootAsync({ receiver: false, useFactory: () => fixtureOptions() }).controllers).toEqual(
      [],
    );
  });
});
