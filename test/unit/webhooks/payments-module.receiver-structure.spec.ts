import 'reflect-metadata';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { IdempotencyStore, PaymentEventsQueue, PaymentsModule, PaymentsService } from '../../../lib/index.js';
import { PaymentEventsProcessor } from '../../../lib/webhooks/contracts/payment-events-processor.interface.js';
import { InlinePaymentEventsProcessor } from '../../../lib/webhooks/dispatch/inline-payment-events.processor.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../fixtures/webhooks/webhook-app.fixture.js';

let moduleRef: TestingModule | undefined;
beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
afterEach(async () => {
  await moduleRef?.close();
  moduleRef = undefined;
});

describe('forRootAsync({ receiver }): the receiver declared once, before the factory runs', () => {
  it('receiver: { path } registers that route; the factory gives only values', async () => {
    const module = PaymentsModule.forRootAsync({ receiver: { path: '/hooks/' }, useFactory: () => fixtureOptions() });
    expect(module.controllers).toHaveLength(1);
    moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
    expect(moduleRef.get(IdempotencyStore)).toBeDefined();
  });

  it('receiver: { path } and a factory naming another path fails at boot, naming receiver.path', async () => {
    await expect(
      Test.createTestingModule({
        imports: [
          PaymentsModule.forRootAsync({
            receiver: { path: 'hooks' },
            useFactory: () => fixtureOptions({ path: 'other' }),
          }),
        ],
      }).compile(),
    ).rejects.toThrow(
      "Invalid PaymentsModule option `receiver.path`: is 'hooks', but the options factory sets webhooks.path 'other'",
    );
  });

  it('receiver: false is said once: the factory may leave webhooks out, and no route is registered', async () => {
    const { webhooks: _webhooks, ...client } = fixtureOptions();
    const module = PaymentsModule.forRootAsync({ receiver: false, useFactory: () => client });
    expect(module.controllers).toEqual([]);
    moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
    expect(moduleRef.get(PaymentsService)).toBeInstanceOf(PaymentsService);
    expect(() => moduleRef!.get(IdempotencyStore)).toThrow();
  });

  it('receiver: false with a factory that configures webhooks fails at boot, naming receiver', async () => {
    await expect(
      Test.createTestingModule({
        imports: [PaymentsModule.forRootAsync({ receiver: false, useFactory: () => fixtureOptions() })],
      }).compile(),
    ).rejects.toThrow('Invalid PaymentsModule option `receiver`: is false (no route)');
  });

  it('the removed webhooksPath and webhooksProcessing fail at once, each naming itself and the fix', () => {
    const removed = (extra: Record<string, unknown>) => () =>
      PaymentsModule.forRootAsync({ ...extra, useFactory: () => fixtureOptions() } as Parameters<
        typeof PaymentsModule.forRootAsync
      >[0]);
    expect(removed({ webhooksPath: 'a' })).toThrow(
      /`webhooksPath`: is removed \(it was the deprecated spelling of receiver.path\)\. Fix: pass PaymentsModule.forRootAsync\(\{ receiver: \{ path: /,
    );
    expect(removed({ webhooksPath: false })).toThrow(/`webhooksPath`: is removed.*or receiver: false for no route/);
    expect(removed({ receiver: { path: 'a' }, webhooksPath: 'a' })).toThrow(/`webhooksPath`: is removed/);
    expect(removed({ webhooksProcessing: 'queue' })).toThrow(
      /`webhooksProcessing`: is removed \(it was the deprecated spelling of receiver.processing\)\. Fix: pass PaymentsModule.forRootAsync\(\{ receiver: \{ processing: 'queue' \}/,
    );
  });

  it('a bad receiver fails at once, naming the option', () => {
    expect(() =>
      PaymentsModule.forRootAsync({
        receiver: { processing: 'later' as 'queue' },
        useFactory: () => fixtureOptions(),
      }),
    ).toThrow(/`receiver.processing`: must be 'inline' or 'queue'/);
    expect(() =>
      PaymentsModule.forRootAsync({ receiver: 'hooks' as unknown as false, useFactory: () => fixtureOptions() }),
    ).toThrow(/`receiver`: must be \{ path\?, processing\?, worker\? \} or false/);
  });

  it("receiver: { processing: 'inline' } and a factory asking for a queue fails at boot, naming receiver.processing", async () => {
    await expect(
      Test.createTestingModule({
        imports: [
          PaymentsModule.forRootAsync({
            receiver: { processing: 'inline' },
            useFactory: () =>
              fixtureOptions({ processing: { queue: { connection: { host: '127.0.0.1', port: 1 }, worker: false } } }),
          }),
        ],
      }).compile(),
    ).rejects.toThrow('Invalid PaymentsModule option `receiver.processing`');
  });

  it('without processing the receiver is inline: a factory asking for a queue fails at boot, naming receiver.processing and the fix', async () => {
    for (const receiver of [undefined, { path: 'hooks' }]) {
      const module = PaymentsModule.forRootAsync({
        receiver,
        useFactory: () =>
          fixtureOptions({
            ...(receiver ? { path: 'hooks' } : {}),
            processing: { queue: { connection: { host: '127.0.0.1', port: 1 }, worker: false } },
          }),
      });
      await expect(Test.createTestingModule({ imports: [module] }).compile()).rejects.toThrow(
        "Invalid PaymentsModule option `receiver.processing`: is 'inline', but the options factory sets processing 'queue'. Fix: pass PaymentsModule.forRootAsync({ receiver: { processing: 'queue' }, ... })",
      );
    }
  });

  it('without processing, an inline factory boots with the inline processor and no queue part', async () => {
    const module = PaymentsModule.forRootAsync({
      receiver: { path: 'hooks' },
      useFactory: () => fixtureOptions({ path: 'hooks' }),
    });
    moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
    expect(moduleRef.get(PaymentEventsProcessor)).toBeInstanceOf(InlinePaymentEventsProcessor);
    expect(() => moduleRef!.get(PaymentEventsQueue)).toThrow();
  });

  it('a worker that is not a boolean fails at once, naming receiver.worker', () => {
    expect(() =>
      PaymentsModule.forRootAsync({
        receiver: { processing: 'queue', worker: 'no' as unknown as boolean },
        useFactory: () => fixtureOptions(),
      }),
    ).toThrow(/`receiver.worker`: must be a boolean/);
  });
});
