import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type INestApplication, type Provider, type Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  OnPaymentEvent,
  PaymentsConfigurationError,
  PaymentsModule,
  standardWebhooksVerifier,
  type PaymentEvent,
} from '../../../../lib/index.js';
import { createPaymentEvent, signWebhook } from '../../../../lib/testing/index.js';
import { PaymentListener as BillingPaymentListener } from '../../../fixtures/webhooks/handler-ids/billing-payment.listener.js';
import { PaymentListener as ShippingPaymentListener } from '../../../fixtures/webhooks/handler-ids/shipping-payment.listener.js';

// Handler ids as a merchant meets them: a real app (Test.createTestingModule, rawBody, a listening
// server), signed deliveries over HTTP. One id, one handler: anything else is refused at boot.
const SECRET = `whsec_${Buffer.from('handler-id-duplicates-secret-32b').toString('base64')}`;

@Injectable()
class Orders {
  readonly runs: string[] = [];
  @OnPaymentEvent('payment_intent.succeeded', { handlerId: 'orders.paid' })
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    this.runs.push(`paid:${event.id}`);
  }
  @OnPaymentEvent('payment_intent.cancelled', { handlerId: 'orders.paid' })
  cancelled(event: PaymentEvent<'payment_intent.cancelled'>): void {
    this.runs.push(`cancelled:${event.id}`);
  }
}

@Injectable()
class Refunds {
  // Its explicit id is the default id of the method below: the two collide too.
  @OnPaymentEvent('payment_intent.errored_capture', { handlerId: 'Refunds.failed' })
  erroredRefund(): void {}
  @OnPaymentEvent('setup_intent.failed')
  failed(): void {}
}

@Injectable()
class Billing {
  @OnPaymentEvent('payment_intent.succeeded', { handlerId: 'paid' })
  invoice(): void {}
}

@Injectable()
class Shipping {
  @OnPaymentEvent('payment_intent.succeeded', { handlerId: 'paid' })
  ship(): void {}
}

@Injectable()
class DistinctIds {
  readonly runs: string[] = [];
  @OnPaymentEvent('payment_intent.succeeded', { handlerId: 'orders.paid' })
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    this.runs.push(`paid:${event.id}`);
  }
  @OnPaymentEvent('payment_intent.cancelled', { handlerId: 'orders.cancelled' })
  cancelled(event: PaymentEvent<'payment_intent.cancelled'>): void {
    this.runs.push(`cancelled:${event.id}`);
  }
}

@Injectable()
class Fulfilment {
  static readonly runs: string[] = [];
  @OnPaymentEvent('payment_intent.succeeded')
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    Fulfilment.runs.push(event.id);
  }
}

const named = (name: string, providers: Provider[]): Type<unknown> => {
  @Module({ providers })
  class Feature {}
  Object.defineProperty(Feature, 'name', { value: name });
  return Feature;
};

const opened: INestApplication[] = [];
afterEach(async () => {
  Fulfilment.runs.length = 0;
  await Promise.all(opened.splice(0).map((app) => app.close()));
});

/** Boots the merchant's app as `main.ts` would (rawBody) and listens on an ephemeral port. */
async function boot(
  imports: Type<unknown>[],
  providers: Provider[] = [],
): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      PaymentsModule.forRoot({
        apiKey: 'sk_test_handler_id_duplicates',
        environment: 'sandbox',
        baseUrl: 'https://sandbox.payments.invalid',
        webhooks: { verifier: standardWebhooksVerifier({ secrets: SECRET }) },
      }),
      ...imports,
    ],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ rawBody: true, logger: false });
  opened.push(app);
  await app.listen(0, '127.0.0.1');
  return { app, url: `${await app.getUrl()}/payments/webhooks` };
}

const bootError = (imports: Type<unknown>[], providers: Provider[] = []): Promise<unknown> =>
  boot(imports, providers).then(
    () => undefined,
    (caught: unknown) => caught,
  );

async function deliver(url: string, event: object): Promise<{ status: number; body: unknown }> {
  const { rawBody, headers } = signWebhook(event, { scheme: 'standard-webhooks', secret: SECRET });
  const response = await fetch(url, { method: 'POST', headers, body: rawBody });
  return { status: response.status, body: await response.json() };
}

describe('handler ids are unique: two handlers with one id are refused at boot', () => {
  it('refuses two methods of one class with one explicit handlerId, naming both methods and the fix', async () => {
    const error = await bootError([named('OrdersModule', [Orders])]);
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    const message = (error as Error).message;
    expect(message).toContain('@OnPaymentEvent({ handlerId })');
    expect(message).toContain("'orders.paid' is the handler id of two methods: Orders.paid");
    expect(message).toContain('and Orders.cancelled');
    expect(message).toContain(
      "give Orders.cancelled its own id: @OnPaymentEvent(type, { handlerId: 'Orders.cancelled' })",
    );
  });

  it("refuses an explicit handlerId that is another method's ClassName.method id", async () => {
    const error = await bootError([named('RefundsModule', [Refunds])]);
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    const message = (error as Error).message;
    expect(message).toContain("'Refunds.failed' is the handler id of two methods: Refunds.erroredRefund");
    expect(message).toContain('and Refunds.failed');
    // Refunds.failed cannot take its own ClassName.method: the fix names an id nobody has.
    expect(message).toContain(
      "give Refunds.failed its own id: @OnPaymentEvent(type, { handlerId: 'RefundsModule.Refunds.failed' })",
    );
  });

  it('refuses two classes with one explicit handlerId, naming both methods and their modules', async () => {
    const error = await bootError([named('BillingModule', [Billing]), named('ShippingModule', [Shipping])]);
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    const message = (error as Error).message;
    expect(message).toContain(
      "'paid' is the handler id of two methods: Billing.invoice (in BillingModule, found first",
    );
    expect(message).toContain('and Shipping.ship (in ShippingModule)');
    expect(message).toContain("give Shipping.ship its own id: @OnPaymentEvent(type, { handlerId: 'Shipping.ship' })");
  });

  it('refuses two classes of one name from two files (both ClassName.method), naming their modules and the fix', async () => {
    const error = await bootError([
      named('BillingModule', [BillingPaymentListener]),
      named('ShippingModule', [ShippingPaymentListener]),
    ]);
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    const message = (error as Error).message;
    expect(message).toContain(
      "'PaymentListener.onPaid' is the handler id of two distinct classes named PaymentListener",
    );
    expect(message).toContain('BillingModule (found first');
    expect(message).toContain("@OnPaymentEvent(type, { handlerId: 'ShippingModule.PaymentListener.onPaid' })");
  });

  it('runs each method once when each has its own handlerId', async () => {
    const { app, url } = await boot([named('OrdersModule', [DistinctIds])]);
    const paid = createPaymentEvent('payment_intent.succeeded');
    const cancelled = createPaymentEvent('payment_intent.cancelled');
    expect(await deliver(url, paid)).toEqual({ status: 200, body: { received: true, outcome: 'handled' } });
    expect(await deliver(url, cancelled)).toEqual({ status: 200, body: { received: true, outcome: 'handled' } });
    expect(app.get(DistinctIds).runs).toEqual([`paid:${paid.id}`, `cancelled:${cancelled.id}`]);
  });
});

describe('the same method reached twice is one handler, and keeps booting', () => {
  it('one class registered as two providers: boots, and each event runs the handler once', async () => {
    const { url } = await boot(
      [],
      [
        { provide: 'FIRST_FULFILMENT', useClass: Fulfilment },
        { provide: 'SECOND_FULFILMENT', useClass: Fulfilment },
      ],
    );
    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await deliver(url, event)).status).toBe(200);
    expect((await deliver(url, event)).body).toEqual({ received: true, outcome: 'duplicate' });
    expect(Fulfilment.runs).toEqual([event.id]);
  });

  it('one provider reached through useExisting aliases: boots, and each event runs the handler once', async () => {
    const { url } = await boot(
      [],
      [
        Fulfilment,
        { provide: 'FULFILMENT_ALIAS', useExisting: Fulfilment },
        { provide: 'ANOTHER_ALIAS', useExisting: 'FULFILMENT_ALIAS' },
      ],
    );
    const event = createPaymentEvent('payment_intent.succeeded');
    expect(await deliver(url, event)).toEqual({ status: 200, body: { received: true, outcome: 'handled' } });
    expect(Fulfilment.runs).toEqual([event.id]);
  });
});
