import 'reflect-metadata';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger, type DynamicModule, type InjectionToken, type Provider } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  OnPaymentEvent,
  PaymentsConfigurationError,
  PaymentsModule,
  PaymentsService,
  PaymentsWebhooksModule,
  standardWebhooks,
  type PaymentsTransactionRunner,
} from '../../../lib/index.js';
import {
  IntentWatchStore,
  PaymentEventsQueue,
  PaymentsInbox,
  PaymentsReconciler,
} from '../../../lib/webhooks/index.js';
import { PAYMENTS_DISPATCH_PLUGINS } from '../../../lib/webhooks/contracts/dispatch-plugin.interface.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../fixtures/webhooks/webhook-app.fixture.js';

/*
 * An app registers the providers of the receiver's plug-ins it uses, and no other (issue 30, item 1):
 * `forRoot` / `register` read them from the options; `forRootAsync` / `registerAsync` from flags declared
 * beside the structure (`receiver: { reconcile, transactions }`), a factory that turns on an undeclared
 * one failing the boot; without the flags, reconciliation only (the inbox needs `transactions: true`).
 */
let moduleRef: TestingModule | undefined;
beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
afterEach(async () => {
  await moduleRef?.close();
  moduleRef = undefined;
});

/** A runner that is never called here: the inbox is only built. */
const runner: PaymentsTransactionRunner = { run: () => Promise.reject(new Error('not in this test')) };
const reconcile = { afterSeconds: 60 };

/** The tokens a module definition registers providers under. */
function tokensOf(module: DynamicModule): InjectionToken[] {
  return (module.providers ?? []).map((provider: Provider) =>
    typeof provider === 'function' ? provider : (provider as { provide: InjectionToken }).provide,
  );
}

async function boot(module: DynamicModule, providers: Provider[] = []): Promise<TestingModule> {
  moduleRef = await Test.createTestingModule({ imports: [module], providers }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** Whether the Nest container of the app holds a provider under `token` (in any module). */
function registered(app: TestingModule, token: InjectionToken): boolean {
  try {
    app.get(token, { strict: false });
    return true;
  } catch {
    return false;
  }
}

const PLUG_IN_TOKENS: Array<[string, InjectionToken]> = [
  ['PaymentsInbox', PaymentsInbox],
  ['PaymentsReconciler', PaymentsReconciler],
  ['IntentWatchStore', IntentWatchStore],
  ['PaymentEventsQueue', PaymentEventsQueue],
];

@Injectable()
class TransactionalHandler {
  @OnPaymentEvent('payment_intent.succeeded', { transactional: true })
  paid(): void {}
}

describe('forRoot / register: only the plug-ins the options turn on have providers', () => {
  it('forRoot with reconcile: false, without transactions or a queue, registers none of their providers', async () => {
    const module = PaymentsModule.forRoot(fixtureOptions({ reconcile: false }));
    for (const [, token] of PLUG_IN_TOKENS) expect(tokensOf(module)).not.toContain(token);
    expect(module.exports).not.toContain(PaymentsReconciler);
    const app = await boot(module);
    expect(PLUG_IN_TOKENS.filter(([, token]) => registered(app, token)).map(([name]) => name)).toEqual([]);
    expect(() => app.get(PaymentsReconciler, { strict: false })).toThrow();
    // The receiver works without them: its client, and a dispatcher with no hook to call.
    expect(app.get(PaymentsService)).toBeInstanceOf(PaymentsService);
    expect(app.get(PAYMENTS_DISPATCH_PLUGINS, { strict: false })).toEqual([]);
  });

  it('forRoot without reconcile: reconciliation is on by default (the reconciler, its watch list, its hook)', async () => {
    const module = PaymentsModule.forRoot(fixtureOptions());
    expect(tokensOf(module)).toEqual(expect.arrayContaining([PaymentsReconciler, IntentWatchStore]));
    expect(module.exports).toContain(PaymentsReconciler);
    const app = await boot(module);
    expect(app.get(PaymentsReconciler)).toBeInstanceOf(PaymentsReconciler);
    const plugins = app.get<Array<{ name: string }>>(PAYMENTS_DISPATCH_PLUGINS, { strict: false });
    expect(plugins.map((plugin) => plugin.name)).toEqual(['reconciliation']);
  });

  it('forRoot with reconcile and transactions registers the inbox, the reconciler and its watch list', async () => {
    const app = await boot(PaymentsModule.forRoot(fixtureOptions({ reconcile, transactions: { runner } })));
    expect(app.get(PaymentsInbox, { strict: false })).toBeInstanceOf(PaymentsInbox);
    expect(app.get(PaymentsReconciler)).toBeInstanceOf(PaymentsReconciler);
    expect(app.get(IntentWatchStore, { strict: false })).toBeDefined();
    expect(registered(app, PaymentEventsQueue)).toBe(false);
    const plugins = app.get<Array<{ name: string }>>(PAYMENTS_DISPATCH_PLUGINS, { strict: false });
    expect(plugins.map((plugin) => plugin.name)).toEqual(['inbox', 'reconciliation']);
  });

  it('without the inbox, a handler declared { transactional: true } still fails the boot, naming webhooks.transactions', async () => {
    await expect(boot(PaymentsModule.forRoot(fixtureOptions()), [TransactionalHandler])).rejects.toThrow(
      'Invalid PaymentsModule option `webhooks.transactions`: is not set, but TransactionalHandler.paid is declared { transactional: true }',
    );
  });

  it('PaymentsWebhooksModule.register reads them from its values', async () => {
    const client = fixtureOptions(false);
    const verifier = standardWebhooks({ secrets: 'whsec_' + Buffer.from('plug-ins').toString('base64') });
    const bare = PaymentsWebhooksModule.register({ verifier, reconcile: false });
    expect(tokensOf(bare)).not.toContain(PaymentsReconciler);
    expect(tokensOf(PaymentsWebhooksModule.register({ verifier }))).toContain(PaymentsReconciler);
    expect(tokensOf(bare)).not.toContain(PaymentsInbox);
    moduleRef = await Test.createTestingModule({
      imports: [PaymentsModule.forRoot(client), PaymentsWebhooksModule.register({ verifier, reconcile })],
    }).compile();
    expect(moduleRef.get(PaymentsReconciler, { strict: false })).toBeInstanceOf(PaymentsReconciler);
    expect(registered(moduleRef, PaymentsInbox)).toBe(false);
  });
});

describe('forRootAsync({ receiver: { reconcile, transactions } }): the plug-ins declared with the structure', () => {
  it('declared ones are registered, the others not (a flag left out is false once either is given)', async () => {
    const module = PaymentsModule.forRootAsync({
      receiver: { path: 'hooks', reconcile: true },
      useFactory: () => fixtureOptions({ reconcile }),
    });
    expect(tokensOf(module)).toContain(PaymentsReconciler);
    expect(tokensOf(module)).not.toContain(PaymentsInbox);
    const app = await boot(module);
    expect(app.get(PaymentsReconciler)).toBeInstanceOf(PaymentsReconciler);
    expect(registered(app, PaymentsInbox)).toBe(false);
  });

  it("both declared false (and processing 'inline'): none registered, and a factory that sets none boots", async () => {
    const module = PaymentsModule.forRootAsync({
      receiver: { path: 'hooks', processing: 'inline', reconcile: false, transactions: false },
      useFactory: () => fixtureOptions(),
    });
    const app = await boot(module);
    expect(PLUG_IN_TOKENS.filter(([, token]) => registered(app, token)).map(([name]) => name)).toEqual([]);
  });

  it("one setting is enough: receiver.reconcile alone, or the factory's webhooks.reconcile alone, turns it on", async () => {
    const declared = await boot(
      PaymentsModule.forRootAsync({ receiver: { path: 'hooks', reconcile: true }, useFactory: () => fixtureOptions() }),
    );
    expect(declared.get<Array<{ name: string }>>(PAYMENTS_DISPATCH_PLUGINS, { strict: false })).toHaveLength(1);
    await declared.close();
    moduleRef = undefined;
    const fromFactory = await boot(
      PaymentsModule.forRootAsync({
        receiver: { path: 'hooks', transactions: false },
        useFactory: () => fixtureOptions({ reconcile }),
      }),
    );
    expect(fromFactory.get(PaymentsReconciler)).toBeInstanceOf(PaymentsReconciler);
  });

  it('the older spelling receiver: { reconcile: false } still turns it off when the factory leaves reconcile out', async () => {
    const app = await boot(
      PaymentsModule.forRootAsync({
        receiver: { path: 'hooks', reconcile: false },
        useFactory: () => fixtureOptions(),
      }),
    );
    expect(registered(app, PaymentsReconciler)).toBe(false);
    expect(app.get(PAYMENTS_DISPATCH_PLUGINS, { strict: false })).toEqual([]);
  });

  it('a factory that turns on a plug-in declared false fails at boot, naming the flag and the fix', async () => {
    await expect(
      boot(
        PaymentsModule.forRootAsync({
          receiver: { path: 'hooks', transactions: true, reconcile: false },
          useFactory: () => fixtureOptions({ reconcile }),
        }),
      ),
    ).rejects.toThrow(
      "Invalid PaymentsModule option `receiver.reconcile`: is not declared, but the options factory sets webhooks.reconcile (a plug-in's providers are registered before the factory runs). Fix: pass PaymentsModule.forRootAsync({ receiver: { ..., reconcile: true }, ... }), or drop webhooks.reconcile from the factory",
    );
    await expect(
      boot(
        PaymentsModule.forRootAsync({
          receiver: { reconcile: false },
          useFactory: () => fixtureOptions({ transactions: { runner } }),
        }),
      ),
    ).rejects.toMatchObject({ constructor: PaymentsConfigurationError, option: 'receiver.transactions' });
  });

  it('a flag that is not a boolean fails at once, naming it', () => {
    expect(() =>
      PaymentsModule.forRootAsync({
        receiver: { reconcile: 'yes' as unknown as boolean },
        useFactory: () => fixtureOptions(),
      }),
    ).toThrow(/`receiver.reconcile`: must be a boolean, got string/);
  });

  it('without either flag: reconciliation is registered (on by default), the inbox is not', async () => {
    for (const receiver of [{ path: 'hooks' }, undefined]) {
      const module = PaymentsModule.forRootAsync({
        receiver,
        useFactory: () => fixtureOptions({ ...(receiver ? { path: 'hooks' } : {}), reconcile }),
      });
      expect(tokensOf(module)).toEqual(expect.arrayContaining([PaymentsReconciler, IntentWatchStore]));
      expect(tokensOf(module)).not.toContain(PaymentsInbox);
      const app = await boot(module);
      expect(app.get(PaymentsReconciler)).toBeInstanceOf(PaymentsReconciler);
      const plugins = app.get<Array<{ name: string }>>(PAYMENTS_DISPATCH_PLUGINS, { strict: false });
      expect(plugins.map((plugin) => plugin.name)).toEqual(['reconciliation']);
      await app.close();
      moduleRef = undefined;
    }
  });

  it("without either flag, the factory's webhooks.reconcile: false turns reconciliation off", async () => {
    const app = await boot(
      PaymentsModule.forRootAsync({
        receiver: { path: 'hooks' },
        useFactory: () => fixtureOptions({ path: 'hooks', reconcile: false }),
      }),
    );
    expect(app.get(PAYMENTS_DISPATCH_PLUGINS, { strict: false })).toEqual([]);
  });

  it('without either flag, a factory that sets webhooks.transactions fails the boot, naming receiver.transactions and the fix', async () => {
    for (const receiver of [{ path: 'hooks' }, undefined]) {
      await expect(
        Test.createTestingModule({
          imports: [
            PaymentsModule.forRootAsync({
              receiver,
              useFactory: () => fixtureOptions({ ...(receiver ? { path: 'hooks' } : {}), transactions: { runner } }),
            }),
          ],
        }).compile(),
      ).rejects.toThrow(
        "Invalid PaymentsModule option `receiver.transactions`: is not declared, but the options factory sets webhooks.transactions (a plug-in's providers are registered before the factory runs). Fix: pass PaymentsModule.forRootAsync({ receiver: { ..., transactions: true }, ... }), or drop webhooks.transactions from the factory",
      );
    }
  });
});

describe('PaymentsWebhooksModule.registerAsync({ reconcile, transactions })', () => {
  const client = fixtureOptions(false);
  const verifier = standardWebhooks({ secrets: 'whsec_' + Buffer.from('plug-ins-async').toString('base64') });

  it('registers the declared plug-ins only', async () => {
    const module = PaymentsWebhooksModule.registerAsync({
      transactions: true,
      reconcile: false,
      useFactory: () => ({ verifier }),
    });
    expect(tokensOf(module)).toContain(PaymentsInbox);
    expect(tokensOf(module)).not.toContain(PaymentsReconciler);
    moduleRef = await Test.createTestingModule({ imports: [PaymentsModule.forRoot(client), module] }).compile();
    expect(moduleRef.get(PaymentsInbox, { strict: false })).toBeInstanceOf(PaymentsInbox);
    expect(registered(moduleRef, PaymentsReconciler)).toBe(false);
  });

  it('values that turn on an undeclared plug-in fail at boot, naming the flag', async () => {
    await expect(
      Test.createTestingModule({
        imports: [
          PaymentsModule.forRoot(client),
          PaymentsWebhooksModule.registerAsync({ reconcile: false, useFactory: () => ({ verifier, reconcile }) }),
        ],
      }).compile(),
    ).rejects.toThrow(
      'Invalid PaymentsModule option `PaymentsWebhooksModule reconcile`: is not declared, but the options factory sets values.reconcile',
    );
  });

  it('without either flag: reconciliation is registered, the inbox is not, and values.transactions fails the boot naming the flag', async () => {
    const module = PaymentsWebhooksModule.registerAsync({ useFactory: () => ({ verifier, reconcile }) });
    expect(tokensOf(module)).toEqual(expect.arrayContaining([PaymentsReconciler, IntentWatchStore]));
    expect(tokensOf(module)).not.toContain(PaymentsInbox);
    await expect(
      Test.createTestingModule({
        imports: [
          PaymentsModule.forRoot(client),
          PaymentsWebhooksModule.registerAsync({ useFactory: () => ({ verifier, transactions: { runner } }) }),
        ],
      }).compile(),
    ).rejects.toThrow(
      "Invalid PaymentsModule option `PaymentsWebhooksModule transactions`: is not declared, but the options factory sets values.transactions (a plug-in's providers are registered before the factory runs). Fix: pass PaymentsWebhooksModule.registerAsync({ ..., transactions: true }), or drop transactions from the values",
    );
  });
});
