import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  PaymentsConfigurationError,
  PaymentsModule,
  PaymentsService,
  type PaymentsEnvironment,
  type PaymentsModuleOptions,
} from '../../lib/index.js';
import { ScriptedServer } from '../e2e/client/support/scripted-server.js';

const INTENT_ID = '3f1c2a9e-8b7d-4c6e-9a5f-1b2c3d4e5f60';

describe('forRootAsync and isGlobal', () => {
  let server: ScriptedServer;
  let baseUrl: string;
  const opened: TestingModule[] = [];

  const boot = async (imports: Array<DynamicModule | (new () => unknown)>): Promise<TestingModule> => {
    const moduleRef = await Test.createTestingModule({ imports }).compile();
    opened.push(moduleRef);
    return moduleRef;
  };

  /** The X-Api-Key the service sends, as the loopback server saw it. */
  const keySentBy = async (payments: PaymentsService): Promise<unknown> => {
    await payments.paymentIntents.retrieve(INTENT_ID);
    return server.requests.at(-1)!.headers['x-api-key'];
  };

  const options = (apiKey: string): PaymentsModuleOptions => ({
    apiKey,
    environment: 'sandbox',
    baseUrl,
    allowInsecureHttp: true,
    webhooks: false,
  });

  beforeAll(async () => {
    server = new ScriptedServer().answer({ status: 200, body: { id: INTENT_ID, state: 'succeeded' } });
    baseUrl = await server.listen();
  });

  afterEach(async () => {
    while (opened.length) await opened.pop()!.close();
  });

  afterAll(async () => {
    await server.close();
  });

  it('forRootAsync with useFactory and inject builds a working client', async () => {
    @Module({ providers: [{ provide: 'KEY', useValue: 'sk_test_factory' }], exports: ['KEY'] })
    class KeyModule {}
    const moduleRef = await boot([
      PaymentsModule.forRootAsync({
        imports: [KeyModule],
        inject: ['KEY'],
        useFactory: (key: string) => options(key),
        receiver: false,
      }),
    ]);
    expect(await keySentBy(moduleRef.get(PaymentsService))).toBe('sk_test_factory');
  });

  it('forRootAsync with useClass builds a working client', async () => {
    @Injectable()
    class PaymentsConfig {
      createPaymentsOptions(): PaymentsModuleOptions {
        return options('sk_test_use_class');
      }
    }
    const moduleRef = await boot([PaymentsModule.forRootAsync({ useClass: PaymentsConfig, receiver: false })]);
    expect(await keySentBy(moduleRef.get(PaymentsService))).toBe('sk_test_use_class');
  });

  it('forRootAsync with useExisting reuses a provider of an imported module', async () => {
    @Injectable()
    class SharedPaymentsConfig {
      createPaymentsOptions(): Promise<PaymentsModuleOptions> {
        return Promise.resolve(options('sk_test_use_existing'));
      }
    }
    @Module({ providers: [SharedPaymentsConfig], exports: [SharedPaymentsConfig] })
    class SharedConfigModule {}
    const moduleRef = await boot([
      PaymentsModule.forRootAsync({
        imports: [SharedConfigModule],
        useExisting: SharedPaymentsConfig,
        receiver: false,
      }),
    ]);
    expect(await keySentBy(moduleRef.get(PaymentsService))).toBe('sk_test_use_existing');
  });

  describe('@nestjs/config recipe (ConfigModule + ConfigService)', () => {
    const envNames = ['PAYMENTS_API_KEY', 'PAYMENTS_ENVIRONMENT', 'PAYMENTS_BASE_URL'] as const;
    const saved = Object.fromEntries(envNames.map((name) => [name, process.env[name]]));

    afterEach(() => {
      for (const name of envNames) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    });

    /** The README's recipe, with the loopback server's `allowInsecureHttp`, no .env file and no webhook route. */
    const paymentsFromConfig = (): DynamicModule =>
      PaymentsModule.forRootAsync({
        imports: [ConfigModule.forRoot({ ignoreEnvFile: true })],
        inject: [ConfigService],
        useFactory: (config: ConfigService): PaymentsModuleOptions => ({
          apiKey: config.get<string>('PAYMENTS_API_KEY')!,
          environment: config.get<PaymentsEnvironment>('PAYMENTS_ENVIRONMENT', 'sandbox'),
          baseUrl: config.get<string>('PAYMENTS_BASE_URL')!,
          allowInsecureHttp: true,
          webhooks: false,
        }),
        receiver: false,
      });

    it('reads the key, environment and base address from ConfigService', async () => {
      process.env.PAYMENTS_API_KEY = 'sk_test_from_env';
      process.env.PAYMENTS_BASE_URL = baseUrl;
      const moduleRef = await boot([paymentsFromConfig()]);
      expect(await keySentBy(moduleRef.get(PaymentsService))).toBe('sk_test_from_env');
    });

    it('[A5] a rotated key takes effect by changing the environment variable and restarting, with no code change', async () => {
      process.env.PAYMENTS_BASE_URL = baseUrl;
      process.env.PAYMENTS_API_KEY = 'sk_test_old_leaked';
      const before = await boot([paymentsFromConfig()]);
      expect(await keySentBy(before.get(PaymentsService))).toBe('sk_test_old_leaked');
      await opened.pop()!.close();

      process.env.PAYMENTS_API_KEY = 'sk_test_rotated';
      const after = await boot([paymentsFromConfig()]);
      expect(await keySentBy(after.get(PaymentsService))).toBe('sk_test_rotated');
    });

    it('a missing environment variable fails at boot with PaymentsConfigurationError naming apiKey', async () => {
      delete process.env.PAYMENTS_API_KEY;
      process.env.PAYMENTS_BASE_URL = baseUrl;
      await expect(Test.createTestingModule({ imports: [paymentsFromConfig()] }).compile()).rejects.toMatchObject({
        constructor: PaymentsConfigurationError,
        option: 'apiKey',
      });
    });
  });

  describe('global by default', () => {
    @Injectable()
    class Checkout {
      constructor(readonly payments: PaymentsService) {}
    }
    @Module({ providers: [Checkout] })
    class CheckoutModule {}

    it('a feature module that does not import PaymentsModule can inject PaymentsService', async () => {
      const moduleRef = await boot([PaymentsModule.forRoot(options('sk_test_global')), CheckoutModule]);
      expect(moduleRef.get(Checkout).payments).toBeInstanceOf(PaymentsService);
    });

    it('forRootAsync is global by default too', async () => {
      const moduleRef = await boot([
        PaymentsModule.forRootAsync({ useFactory: () => options('sk_test_global'), receiver: false }),
        CheckoutModule,
      ]);
      expect(moduleRef.get(Checkout).payments).toBeInstanceOf(PaymentsService);
    });

    it('isGlobal: false: a feature module without the import cannot inject PaymentsService', async () => {
      await expect(
        Test.createTestingModule({
          imports: [PaymentsModule.forRoot({ ...options('sk_test_local'), isGlobal: false }), CheckoutModule],
        }).compile(),
      ).rejects.toThrow(/PaymentsService/);
    });

    it('isGlobal: false with forRootAsync: a feature module without the import cannot inject PaymentsService', async () => {
      await expect(
        Test.createTestingModule({
          imports: [
            PaymentsModule.forRootAsync({
              useFactory: () => options('sk_test_local'),
              isGlobal: false,
              receiver: false,
            }),
            CheckoutModule,
          ],
        }).compile(),
      ).rejects.toThrow(/PaymentsService/);
    });

    it('isGlobal: false: the module that imports PaymentsModule can inject PaymentsService', async () => {
      @Module({
        imports: [PaymentsModule.forRoot({ ...options('sk_test_local'), isGlobal: false })],
        providers: [Checkout],
      })
      class LocalCheckoutModule {}
      const moduleRef = await boot([LocalCheckoutModule]);
      expect(moduleRef.get(Checkout).payments).toBeInstanceOf(PaymentsService);
    });
  });
});
