import 'reflect-metadata';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  OnPaymentEvent,
  PaymentsConfigurationError,
  PaymentsModule,
  PaymentsWebhooksModule,
  standardWebhooksVerifier,
} from '../../../lib/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import {
  API_KEY,
  CURRENT_SECRET,
  fixtureOptions,
  FOREIGN_SECRET,
  post,
  sign,
  startWebhookApp,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';
import { AuditTrail, auditPlugin } from '../../fixtures/plugins/audit/audit.plugin.js';

/*
 * A plug-in is an object (issue 41): the test tree's audit plug-in (test/fixtures/plugins/audit/, one
 * folder, nothing of it in lib/) brings a provider, calls a handler itself around the call, and hears
 * about each dispatch and each answer, through each way a receiver is declared.
 */

const ran: string[] = [];

@Injectable()
class Fulfilment {
  @OnPaymentEvent('payment_intent.succeeded')
  ship(): void {
    ran.push('ship');
  }

  @OnPaymentEvent('payment_intent.succeeded')
  audited(): void {
    ran.push('audited');
  }
}

const logger = new CapturingLogger();
let app: WebhookApp | undefined;
beforeAll(() => Logger.overrideLogger(logger));
afterEach(async () => {
  await app?.close();
  app = undefined;
  ran.length = 0;
});

const AROUND = ['Fulfilment.audited'];

describe('a plug-in of the test tree, passed as an object', () => {
  it.each([
    [
      'forRoot({ webhooks: { plugins } })',
      () => PaymentsModule.forRoot(fixtureOptions({ plugins: [auditPlugin({ around: AROUND })] })),
    ],
    [
      'forRootAsync({ receiver: { plugins } })',
      () =>
        PaymentsModule.forRootAsync({
          receiver: { path: 'payments/webhooks', reconcile: true, plugins: [auditPlugin({ around: AROUND })] },
          useFactory: () => fixtureOptions(),
        }),
    ],
  ])(
    '%s: its provider is registered and exported, its hooks run around the call, after the dispatch and after the answer',
    async (_, payments) => {
      app = await startWebhookApp({ adapter: 'express', logger, payments: payments(), providers: [Fulfilment] });
      const trail = app.app.get(AuditTrail);
      const event = createPaymentEvent('payment_intent.succeeded');
      const url = `${app.baseUrl}/payments/webhooks`;

      expect((await post(url, sign(event))).status).toBe(200);
      expect(ran.sort()).toEqual(['audited', 'ship']);
      expect(trail.lines).toEqual([
        `before Fulfilment.audited ${event.id}`,
        'after Fulfilment.audited',
        `dispatched ${event.id} handled`,
        'answered 200',
      ]);

      // A copy: the dispatcher's claims make it a duplicate, and the plug-in is not asked to call anything.
      trail.lines.length = 0;
      expect((await post(url, sign(event))).status).toBe(200);
      expect(ran).toHaveLength(2);
      expect(trail.lines).toEqual([`dispatched ${event.id} duplicate`, 'answered 200']);

      // A forged delivery never reaches a handler or a dispatch; the plug-in hears of the refusal.
      trail.lines.length = 0;
      expect(
        (await post(url, sign(createPaymentEvent('payment_intent.succeeded'), { secret: FOREIGN_SECRET }))).status,
      ).toBe(401);
      expect(trail.lines).toEqual(['refused 401']);
      expect(ran).toHaveLength(2);
    },
  );

  it('PaymentsWebhooksModule.registerAsync({ plugins }): the same, on Fastify; a hook that throws changes no answer', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiKey: API_KEY,
          environment: 'sandbox',
          baseUrl: 'https://sandbox.payments.test',
          webhooks: false,
        }),
        PaymentsWebhooksModule.registerAsync({
          path: 'hooks',
          plugins: [auditPlugin({ around: AROUND, throwAfterAnswer: true })],
          useFactory: () => ({ verifier: standardWebhooksVerifier({ secrets: CURRENT_SECRET }) }),
        }),
      ],
      providers: [Fulfilment],
    }).compile();
    const { FastifyAdapter } = await import('@nestjs/platform-fastify');
    const nest = moduleRef.createNestApplication(new FastifyAdapter(), { rawBody: true, logger });
    await nest.listen(0, '127.0.0.1');
    app = {
      app: nest,
      baseUrl: `http://127.0.0.1:${(nest.getHttpServer().address() as { port: number }).port}`,
      close: () => nest.close(),
    };
    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await post(`${app.baseUrl}/hooks`, sign(event))).status).toBe(200);
    expect(nest.get(AuditTrail).lines).toEqual([
      `before Fulfilment.audited ${event.id}`,
      'after Fulfilment.audited',
      `dispatched ${event.id} handled`,
      'answered 200',
    ]);
    const messages = logger.lines.map((line) => line.message);
    expect(messages).toContain("The audit plug-in's afterAnswer threw and was ignored: Error");
    expect(messages.join('\n')).not.toContain('the audit plug-in failed');
  });
});

describe('a plug-in that is not one fails the boot, naming itself and the fix', () => {
  it.each([
    ['an empty object', [{}], 'plugins[0]', 'has no name'],
    ['hooks without a factory', [{ name: 'x', hooks: {} }], 'plugins[0]', 'has hooks without a useFactory'],
    ['the same plug-in twice', [auditPlugin(), auditPlugin()], 'plugins', "holds two plug-ins named 'audit'"],
    [
      'a processor that is none of its providers',
      [{ name: 'x', processor: 'SOMETHING', providers: [] }],
      'plugins[0]',
      'has a processor that is none of its providers',
    ],
    [
      'two plug-ins that process events',
      [
        { name: 'a', processor: 'A', providers: [{ provide: 'A', useValue: {} }] },
        { name: 'b', processor: 'B', providers: [{ provide: 'B', useValue: {} }] },
      ],
      'plugins',
      'holds two plug-ins that process events (a, b)',
    ],
    [
      "a built-in plug-in's name",
      [auditPlugin({ name: 'reconciliation' })],
      'plugins',
      "holds two plug-ins named 'reconciliation'",
    ],
  ])('%s', (_, plugins, option, message) => {
    let error: unknown;
    try {
      PaymentsModule.forRoot(fixtureOptions({ plugins: plugins as never }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    expect((error as PaymentsConfigurationError).message).toContain(option);
    expect((error as PaymentsConfigurationError).message).toContain(message);
  });

  it('an options factory cannot return plugins: they are structure', async () => {
    const moduleRef = Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiKey: API_KEY,
          environment: 'sandbox',
          baseUrl: 'https://sandbox.payments.test',
          webhooks: false,
        }),
        PaymentsWebhooksModule.registerAsync({
          useFactory: () => ({
            verifier: standardWebhooksVerifier({ secrets: CURRENT_SECRET }),
            plugins: [auditPlugin()],
          }),
        }),
      ],
    });
    await expect(moduleRef.compile()).rejects.toThrow(/values\.plugins.*is structure/);
  });
});
