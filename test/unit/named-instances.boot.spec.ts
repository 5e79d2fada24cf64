import 'reflect-metadata';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { DynamicModule, InjectionToken } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  getPaymentsServiceToken,
  OnPaymentEvent,
  PaymentEventsQueue,
  PaymentsConfigurationError,
  PaymentsInvalidArgumentError,
  PaymentsModule,
  PaymentsService,
  standardWebhooksVerifier,
  type OnPaymentEventOptions,
  type PaymentsModuleOptions,
} from '../../lib/index.js';
import {
  getPaymentEventsQueueToken,
  getPaymentEventsRegistryToken,
  PaymentEventsRegistry,
} from '../../lib/webhooks/index.js';
import { validatePaymentsOptions } from '../../lib/payments-options.validator.js';

const SECRET = `whsec_${Buffer.from('named-instances-secret-32-bytes!').toString('base64')}`;
const verifier = standardWebhooksVerifier({ secrets: SECRET });

const options = (apiKey: string, webhooks: PaymentsModuleOptions['webhooks'] = false): PaymentsModuleOptions => ({
  apiKey,
  environment: 'sandbox',
  baseUrl: 'https://sandbox.payments.test',
  webhooks,
});

describe('named instances: boot', () => {
  const opened: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
  });

  /** Compiles and initialises (the duplicate checks run in onModuleInit, as in app.init / app.listen). */
  const boot = async (imports: DynamicModule[]): Promise<TestingModule> => {
    const moduleRef = await Test.createTestingModule({ imports }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    return moduleRef;
  };

  const bootError = async (imports: DynamicModule[]): Promise<PaymentsConfigurationError> => {
    const error = await boot(imports).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    return error as PaymentsConfigurationError;
  };

  it('refuses two unnamed instances, naming `name` and the fix', async () => {
    const error = await bootError([
      PaymentsModule.forRoot(options('sk_test_a')),
      PaymentsModule.forRoot(options('sk_test_b')),
    ]);
    expect(error.option).toBe('name');
    expect(error.message).toContain("PaymentsModule.forRoot({ name: 'eu', ... })");
  });

  it('refuses two instances with the same name, one of them async', async () => {
    const error = await bootError([
      PaymentsModule.forRoot({ name: 'eu', ...options('sk_test_a') }),
      PaymentsModule.forRootAsync({ name: 'eu', receiver: false, useFactory: () => options('sk_test_b') }),
    ]);
    expect(error.option).toBe('name');
    expect(error.message).toContain("'eu' is given to two PaymentsModule instances");
  });

  it('refuses two instances on one route, naming webhooks.path and suggesting one route per instance', async () => {
    const error = await bootError([
      PaymentsModule.forRoot(options('sk_test_a', { verifier })),
      PaymentsModule.forRoot({ name: 'eu', ...options('sk_test_b', { verifier }) }),
    ]);
    expect(error.option).toBe('webhooks.path');
    expect(error.message).toContain("'payments/webhooks' is the route of two instances");
    expect(error.message).toContain('payments/webhooks/');
  });

  it('refuses two instances whose routes differ only in letter case (Express matches them as one), naming both', async () => {
    const error = await bootError([
      PaymentsModule.forRoot(options('sk_test_a', { verifier, path: 'payments/webhooks' })),
      PaymentsModule.forRoot({ name: 'eu', ...options('sk_test_b', { verifier, path: '/Payments/Webhooks/' }) }),
    ]);
    expect(error.option).toBe('webhooks.path');
    expect(error.message).toContain("'Payments/Webhooks' (instance 'eu')");
    expect(error.message).toContain("'payments/webhooks' (instance 'default')");
    expect(error.message).toContain('letter case');
    expect(error.message).toContain('payments/webhooks/eu');
  });

  it("names the instance in a boot error of a named instance: option `baseUrl` of instance 'eu'", () => {
    const bad = { ...options('sk_test_b'), baseUrl: 'not a url' };
    const named = (() => {
      try {
        validatePaymentsOptions(bad, 'eu');
      } catch (error) {
        return error;
      }
    })();
    expect(named).toBeInstanceOf(PaymentsConfigurationError);
    expect((named as PaymentsConfigurationError).option).toBe('baseUrl');
    expect((named as Error).message).toContain("`baseUrl` of instance 'eu'");
    expect(() => validatePaymentsOptions(bad)).toThrow(/`baseUrl`: /);
  });

  it('refuses two instances on one queue name', async () => {
    const queue = {
      connection: { host: '127.0.0.1', port: 6379, lazyConnect: true },
      name: 'shared-queue',
      worker: false,
    };
    const error = await bootError([
      PaymentsModule.forRoot(options('sk_test_a', { verifier, processing: { queue } })),
      PaymentsModule.forRoot({
        name: 'eu',
        ...options('sk_test_b', { verifier, path: 'payments/eu', processing: { queue } }),
      }),
    ]);
    expect(error.option).toBe('webhooks.processing.queue.name');
  });

  it.each([['has space'], [''], ['-leading'], ['a:b']])(
    'refuses the instance name %p when the module is defined',
    (name) => {
      expect(() => PaymentsModule.forRoot({ name, ...options('sk_test_a') })).toThrow(PaymentsConfigurationError);
      expect(() =>
        PaymentsModule.forRootAsync({ name, useFactory: () => options('sk_test_a'), receiver: false }),
      ).toThrow(/`name`/);
    },
  );

  it('forRootAsync with a name exports its client under getPaymentsServiceToken(name) only', async () => {
    const moduleRef = await boot([
      PaymentsModule.forRoot(options('sk_test_default')),
      PaymentsModule.forRootAsync({
        name: 'live',
        useFactory: async () => options('sk_live_key'),
        receiver: false,
      }),
    ]);
    const live = moduleRef.get<PaymentsService>(getPaymentsServiceToken('live'));
    expect(live).toBeInstanceOf(PaymentsService);
    expect(moduleRef.get(PaymentsService)).not.toBe(live);
    expect(getPaymentsServiceToken()).toBe(PaymentsService);
    expect(getPaymentsServiceToken('default')).toBe(PaymentsService);
  });

  it('defaults the queue name per instance: payments-webhooks, payments-webhooks-<name>', () => {
    const queued = { verifier, processing: { queue: { connection: {} } } };
    const unnamed = validatePaymentsOptions(options('sk_test_a', queued));
    const eu = validatePaymentsOptions(options('sk_test_a', queued), 'eu');
    expect(unnamed.webhooks && unnamed.webhooks.processing !== 'inline' && unnamed.webhooks.processing.queue.name).toBe(
      'payments-webhooks',
    );
    expect(eu.webhooks && eu.webhooks.processing !== 'inline' && eu.webhooks.processing.queue.name).toBe(
      'payments-webhooks-eu',
    );
  });

  it('refuses a handler bound to a name no instance has (it would never run), naming the handler and the fix', async () => {
    class MisnamedHandlers {
      @OnPaymentEvent('payment_intent.succeeded', { instance: 'ue' })
      paid(): void {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsModule.forRoot({ name: 'eu', ...options('sk_test_a', { verifier }) })],
      providers: [MisnamedHandlers],
    }).compile();
    opened.push(moduleRef);
    const error = await moduleRef.init().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    expect((error as PaymentsConfigurationError).message).toContain(
      "of MisnamedHandlers.paid is 'ue', but no PaymentsModule instance has that name",
    );
    expect((error as PaymentsConfigurationError).message).toContain("PaymentsModule.forRoot({ name: 'ue', ... })");
  });

  it('registers a handler bound with { instance, handlerId } in that instance only, under its handlerId', async () => {
    class EuropeHandlers {
      @OnPaymentEvent('payment_intent.succeeded', { instance: 'eu', handlerId: 'Europe.paid' })
      paid(): void {}

      @OnPaymentEvent('payment_intent.succeeded', { instance: 'eu', handlerId: 'Europe.paidBefore' })
      paidBefore(): void {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot(options('sk_test_default', { verifier, path: 'payments/default' })),
        PaymentsModule.forRoot({ name: 'eu', ...options('sk_test_eu', { verifier, path: 'payments/eu' }) }),
      ],
      providers: [EuropeHandlers],
    }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    const eu = moduleRef.get<PaymentEventsRegistry>(getPaymentEventsRegistryToken('eu'));
    expect(eu.handlers().map((handler) => handler.id)).toEqual(['Europe.paid', 'Europe.paidBefore']);
    expect(moduleRef.get(PaymentEventsRegistry).handlers()).toEqual([]);
  });

  it('refuses a handler bound with { instance } to a name no instance has, naming the option, the handler and the fix', async () => {
    class MisnamedHandlers {
      @OnPaymentEvent('payment_intent.succeeded', { instance: 'ue' })
      paid(): void {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsModule.forRoot({ name: 'eu', ...options('sk_test_a', { verifier }) })],
      providers: [MisnamedHandlers],
    }).compile();
    opened.push(moduleRef);
    const error = await moduleRef.init().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    expect((error as PaymentsConfigurationError).message).toContain(
      "`@OnPaymentEvent({ instance })`: of MisnamedHandlers.paid is 'ue', but no PaymentsModule instance has that name (instances: 'eu')",
    );
  });

  it('refuses the removed spelling name at once, naming it and instance', () => {
    const options = { name: 'eu' } as unknown as OnPaymentEventOptions;
    expect(() => OnPaymentEvent('payment_intent.succeeded', options)).toThrow(PaymentsConfigurationError);
    expect(() => OnPaymentEvent('payment_intent.succeeded', options)).toThrow(
      'Invalid PaymentsModule option `@OnPaymentEvent(type, { name })`: was the deprecated spelling of instance, and is removed. Fix: write @OnPaymentEvent(type, { instance: ... }) instead',
    );
  });

  it('refuses one method bound to two instances', () => {
    expect(() => {
      class TwoInstances {
        @OnPaymentEvent('payment_intent.succeeded', { instance: 'eu' })
        @OnPaymentEvent('payment_intent.cancelled', { instance: 'us' })
        paid(): void {}
      }
      return TwoInstances;
    }).toThrow(PaymentsInvalidArgumentError);
  });
});

describe('parts: what an instance registers', () => {
  const opened: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
  });
  const compile = async (module: DynamicModule): Promise<TestingModule> => {
    const moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
    opened.push(moduleRef);
    return moduleRef;
  };

  it('webhooks: false registers the client part only: no route, no receiver providers', async () => {
    const module = PaymentsModule.forRoot(options('sk_test_a'));
    expect(module.controllers ?? []).toHaveLength(0);
    const moduleRef = await compile(module);
    expect(moduleRef.get(PaymentsService)).toBeInstanceOf(PaymentsService);
    expect(() => moduleRef.get(PaymentEventsRegistry)).toThrow();
    expect(() => moduleRef.get(PaymentEventsQueue)).toThrow();
  });

  it('inline processing registers the receiver part without the queue part', async () => {
    const module = PaymentsModule.forRoot(options('sk_test_a', { verifier }));
    expect(module.controllers).toHaveLength(1);
    const moduleRef = await compile(module);
    expect(moduleRef.get(PaymentEventsRegistry)).toBeInstanceOf(PaymentEventsRegistry);
    expect(() => moduleRef.get(PaymentEventsQueue)).toThrow();
  });

  it('queued processing adds the queue part, exported under the instance token', async () => {
    const queue = { connection: { host: '127.0.0.1', port: 6379, lazyConnect: true }, worker: false };
    const module = PaymentsModule.forRoot({ name: 'eu', ...options('sk_test_a', { verifier, processing: { queue } }) });
    expect(module.exports).toEqual(
      expect.arrayContaining([getPaymentEventsQueueToken('eu'), getPaymentEventsRegistryToken('eu')]),
    );
    expect(module.exports).not.toContain(PaymentEventsQueue);
    const moduleRef = await compile(module);
    expect(moduleRef.get(getPaymentEventsQueueToken('eu'))).toBeInstanceOf(PaymentEventsQueue);
  });

  it('forRootAsync({ receiver: { processing: "inline" } }) leaves the queue part out; a factory asking for a queue then fails the boot', async () => {
    const module = PaymentsModule.forRootAsync({
      receiver: { processing: 'inline' },
      useFactory: () =>
        options('sk_test_a', { verifier, processing: { queue: { connection: { lazyConnect: true }, worker: false } } }),
    });
    const error = await Test.createTestingModule({ imports: [module] })
      .compile()
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    expect((error as PaymentsConfigurationError).option).toBe('receiver.processing');
  });

  it('no provider an app can inject holds the API key: every export of the module is free of it', async () => {
    const apiKey = 'sk_test_never_injectable_key';
    const module = PaymentsModule.forRoot(options(apiKey, { verifier }));
    const moduleRef = await compile(module);
    for (const token of module.exports as InjectionToken[]) {
      const value: unknown = moduleRef.get(token, { strict: false });
      expect(containsString(value, apiKey)).toBe(false);
      expect(inspect(value, { depth: 6 })).not.toContain(apiKey);
    }
  });
});

/** Whether `secret` is reachable from `value` through own properties (public fields, nested objects, arrays, maps). */
function containsString(value: unknown, secret: string, seen = new Set<unknown>(), depth = 0): boolean {
  if (typeof value === 'string') return value.includes(secret);
  if (typeof value !== 'object' || value === null || seen.has(value) || depth > 8) return false;
  seen.add(value);
  const children: unknown[] =
    value instanceof Map ? [...value.values()] : value instanceof Set ? [...value] : Object.values(value as object);
  return children.some((child) => containsString(child, secret, seen, depth + 1));
}
