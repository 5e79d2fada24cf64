import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  OnPaymentEvent,
  PaymentsConfigurationError,
  PaymentsModule,
  standardWebhooksVerifier,
  type OnPaymentEventOptions,
} from '../../../../lib/index.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';

const SECRET = `whsec_${Buffer.from('handler-id-collision-secret-32by').toString('base64')}`;
const runs: string[] = [];

/** A class named PaymentListener, as two feature modules would each declare one. */
function paymentListener(label: string, options?: OnPaymentEventOptions): Type<unknown> {
  @Injectable()
  class PaymentListener {
    @OnPaymentEvent('payment_intent.succeeded', ...(options ? [options] : []))
    paid(): void {
      runs.push(label);
    }
  }
  return PaymentListener;
}

const featureModule = (name: string, listener: Type<unknown>): Type<unknown> => {
  @Module({ providers: [listener] })
  class Feature {}
  Object.defineProperty(Feature, 'name', { value: name });
  return Feature;
};

describe('two handler classes with one class name', () => {
  const opened: TestingModule[] = [];
  afterEach(async () => {
    runs.length = 0;
    await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
  });

  const boot = async (billing: Type<unknown>, shipping: Type<unknown>): Promise<TestingModule> => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiKey: 'sk_test_handler_ids',
          environment: 'sandbox',
          baseUrl: 'https://sandbox.payments.test',
          webhooks: { verifier: standardWebhooksVerifier({ secrets: SECRET }) },
        }),
        featureModule('BillingModule', billing),
        featureModule('ShippingModule', shipping),
      ],
    }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    return moduleRef;
  };

  it('refuse to boot without an explicit id, naming both classes, their modules and the fix', async () => {
    const error = await boot(paymentListener('billing'), paymentListener('shipping')).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    const message = (error as Error).message;
    expect(message).toContain("'PaymentListener.paid' is the handler id of two distinct classes named PaymentListener");
    expect(message).toContain('BillingModule (found first');
    expect(message).toContain('ShippingModule');
    expect(message).toContain("@OnPaymentEvent(type, { handlerId: 'ShippingModule.PaymentListener.paid' })");
    expect(message).not.toContain('two instances of');
  });

  it('both run when the second has its own handlerId; the first keeps ClassName.method (its stored keys stay valid)', async () => {
    const moduleRef = await boot(
      paymentListener('billing'),
      paymentListener('shipping', { handlerId: 'ShippingPaymentListener.paid' }),
    );
    const dispatcher = moduleRef.get(PaymentEventsDispatcher);
    const result = await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), {
      receivedAt: new Date(),
    });
    expect(result.outcome).toBe('handled');
    expect(result.handlers.map((handler) => handler.handler).sort()).toEqual([
      'PaymentListener.paid',
      'ShippingPaymentListener.paid',
    ]);
    expect(runs.sort()).toEqual(['billing', 'shipping']);
  });

  it('refuses a handlerId that is not a short name, naming handlerId', () => {
    expect(() => OnPaymentEvent('payment_intent.succeeded', { handlerId: 'a b:c' })).toThrow('`handlerId` must be');
  });

  it('refuses the removed spelling id at once, naming it and handlerId', () => {
    const options = { id: 'A.paid' } as unknown as OnPaymentEventOptions;
    expect(() => OnPaymentEvent('payment_intent.succeeded', options)).toThrow(PaymentsConfigurationError);
    expect(() => OnPaymentEvent('payment_intent.succeeded', options)).toThrow(
      'Invalid PaymentsModule option `@OnPaymentEvent(type, { id })`: was the deprecated spelling of handlerId, and is removed. Fix: write @OnPaymentEvent(type, { handlerId: ... }) instead',
    );
  });
});
