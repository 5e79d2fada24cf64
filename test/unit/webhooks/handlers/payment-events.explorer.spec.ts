import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Injectable, Module, Post, Scope, type Provider, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { OnPaymentEvent, PaymentsModule, type PaymentEvent } from '../../../../lib/index.js';
import { PaymentEventsRegistry } from '../../../../lib/webhooks/index.js';
import { PAYMENT_EVENT_HANDLER_METADATA } from '../../../../lib/webhooks/contracts/payments-webhooks.constants.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

class ClassProvided {
  @OnPaymentEvent('payment_intent.succeeded')
  paid(): void {}
}

class ValueProvided {
  @OnPaymentEvent('setup_intent.succeeded')
  saved(): void {}
}

class FactoryProvided {
  constructor(readonly label: string) {}
  @OnPaymentEvent('charge.succeeded')
  charged(): void {}
}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedHandler {
  @OnPaymentEvent('payment_intent.cancelled')
  cancelled(): void {}
}

@Injectable({ scope: Scope.TRANSIENT })
class TransientHandler {
  @OnPaymentEvent('payment_intent.errored_sale')
  erroredSale(): void {}
}

class StackedDecorators {
  @OnPaymentEvent('payment_intent.requires_capture')
  @OnPaymentEvent('charge.requires_capture', 'charge.succeeded')
  capture(_event: PaymentEvent): void {}
}

@Controller('checkout')
class CheckoutController {
  @Post()
  confirm(): void {}

  @OnPaymentEvent('payment_intent.requires_review')
  review(): void {}
}

class NoHandlers {
  plain(): void {}
}

const logger = new CapturingLogger();
let moduleRef: TestingModule | undefined;

async function explore(providers: Provider[], controllers: Type<unknown>[] = []): Promise<PaymentEventsRegistry> {
  logger.clear();
  moduleRef = await Test.createTestingModule({
    imports: [PaymentsModule.forRoot(fixtureOptions())],
    providers,
    controllers,
  })
    .setLogger(logger)
    .compile();
  await moduleRef.init();
  return moduleRef.get(PaymentEventsRegistry);
}

afterEach(async () => {
  await moduleRef?.close();
  moduleRef = undefined;
});

const ids = (registry: PaymentEventsRegistry): string[] => registry.handlers().map((handler) => handler.id);

describe('PaymentEventsExplorer', () => {
  it('finds handlers on class providers, named ClassName.methodName', async () => {
    expect(ids(await explore([ClassProvided]))).toEqual(['ClassProvided.paid']);
  });

  it('finds handlers on useValue providers, reading the class from the instance', async () => {
    expect(ids(await explore([{ provide: 'VALUE', useValue: new ValueProvided() }]))).toEqual(['ValueProvided.saved']);
  });

  it('finds handlers on useFactory providers', async () => {
    const registry = await explore([{ provide: 'FACTORY', useFactory: () => new FactoryProvided('made') }]);
    expect(ids(registry)).toEqual(['FactoryProvided.charged']);
  });

  it('finds handlers on controllers', async () => {
    expect(ids(await explore([], [CheckoutController]))).toEqual(['CheckoutController.review']);
  });

  it('merges several @OnPaymentEvent decorators on one method', async () => {
    const registry = await explore([StackedDecorators]);
    expect(registry.handlers()).toEqual([
      expect.objectContaining({
        id: 'StackedDecorators.capture',
        patterns: expect.arrayContaining([
          'payment_intent.requires_capture',
          'charge.requires_capture',
          'charge.succeeded',
        ]),
      }),
    ]);
    expect(registry.handlers()[0]!.patterns).toHaveLength(3);
    expect(Reflect.getMetadata(PAYMENT_EVENT_HANDLER_METADATA, StackedDecorators.prototype.capture)).toHaveLength(3);
  });

  it('skips request-scoped providers with a warning that names them', async () => {
    const registry = await explore([RequestScopedHandler]);
    expect(ids(registry)).toEqual([]);
    expect(
      logger.messages('warn').some((line) => line.includes('RequestScopedHandler') && line.includes('request-scoped')),
    ).toBe(true);
  });

  it('skips transient providers with a warning that names them', async () => {
    const registry = await explore([TransientHandler]);
    expect(ids(registry)).toEqual([]);
    expect(logger.messages('warn').some((line) => line.includes('TransientHandler'))).toBe(true);
  });

  it('does not register an alias (useExisting) a second time', async () => {
    const registry = await explore([ClassProvided, { provide: 'ALIAS', useExisting: ClassProvided }]);
    expect(ids(registry)).toEqual(['ClassProvided.paid']);
    expect(logger.messages('warn')).toEqual([]);
  });

  it('registers one handler id once, warning when two instances of a class declare it', async () => {
    const registry = await explore([
      { provide: 'FIRST', useValue: new ClassProvided() },
      { provide: 'SECOND', useValue: new ClassProvided() },
    ]);
    expect(ids(registry)).toEqual(['ClassProvided.paid']);
    expect(logger.messages('warn').some((line) => line.includes('ClassProvided.paid'))).toBe(true);
  });

  it('ignores providers without handlers and wrappers without an instance', async () => {
    const registry = await explore([
      NoHandlers,
      { provide: 'NOTHING', useValue: undefined },
      { provide: 'NULL', useFactory: () => null },
    ]);
    expect(ids(registry)).toEqual([]);
  });

  it('finds handlers in imported modules', async () => {
    @Module({ providers: [ClassProvided] })
    class FeatureModule {}
    logger.clear();
    moduleRef = await Test.createTestingModule({ imports: [PaymentsModule.forRoot(fixtureOptions()), FeatureModule] })
      .setLogger(logger)
      .compile();
    await moduleRef.init();
    expect(ids(moduleRef.get(PaymentEventsRegistry))).toEqual(['ClassProvided.paid']);
  });

  it('discovers on first use when the registry is read before the lifecycle hooks ran (e.g. by a starting worker)', async () => {
    moduleRef = await Test.createTestingModule({
      imports: [PaymentsModule.forRoot(fixtureOptions())],
      providers: [ClassProvided],
    })
      .setLogger(logger)
      .compile(); // no init(): the explorer's onModuleInit has not run
    expect(
      moduleRef
        .get(PaymentEventsRegistry)
        .handlersFor('payment_intent.succeeded')
        .map((h) => h.id),
    ).toEqual(['ClassProvided.paid']);
    await moduleRef.init();
    expect(ids(moduleRef.get(PaymentEventsRegistry))).toEqual(['ClassProvided.paid']);
  });

  it('logs the route and the handlers of each event at startup', async () => {
    await explore([ClassProvided, StackedDecorators]);
    const lines = logger.messages('log');
    expect(lines).toContain('Receiving webhooks at POST /payments/webhooks');
    expect(lines).toContain('payment_intent.succeeded -> ClassProvided.paid');
    expect(lines).toContain('charge.succeeded -> StackedDecorators.capture');
  });
});
