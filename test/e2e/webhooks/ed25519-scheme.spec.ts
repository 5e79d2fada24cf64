import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, PaymentsModule, type PaymentEvent } from '../../../lib/index.js';
import { standardWebhooksEd25519 } from '../../../lib/webhooks/index.js';
import { createPaymentEvent, PaymentsSimulator, signWebhook } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import {
  fixtureOptions,
  post,
  startWebhookApp,
  type AdapterName,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';
import { ed25519KeyPair } from '../../fixtures/webhooks/ed25519-keys.js';

/*
 * The asymmetric scheme end to end: the simulator signs with the endpoint's private key (whsk_), the
 * receiver holds only the public key (whpk_) and runs the handler once; another key is refused.
 */

@Injectable()
class PaidOrders {
  readonly events: string[] = [];
  @OnPaymentEvent('payment_intent.succeeded')
  onPaid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    this.events.push(event.id);
  }
}

describe.each(['express', 'fastify'] as const)('Standard Webhooks v1a (Ed25519) on %s', (adapter: AdapterName) => {
  const endpointKey = ed25519KeyPair();
  const logger = new CapturingLogger();
  let app: WebhookApp;
  let simulator: PaymentsSimulator;
  let url: string;

  beforeAll(async () => {
    app = await startWebhookApp({
      adapter,
      logger,
      payments: PaymentsModule.forRoot(
        fixtureOptions({ verifier: standardWebhooksEd25519({ publicKeys: endpointKey.whpk }) }),
      ),
      providers: [PaidOrders],
    });
    url = `${app.baseUrl}/payments/webhooks`;
    // The scheme object the simulator is given only sets the scheme: each endpoint signs with its own key.
    simulator = new PaymentsSimulator({
      signature: standardWebhooksEd25519({ privateKeys: ed25519KeyPair().whsk }),
      apiKeys: ['sk_test_ed25519'],
      retrySchedule: [],
    });
    await simulator.start();
  });
  afterAll(async () => {
    await simulator?.stop();
    await app?.close();
  });

  it("the simulator's delivery, signed with the endpoint's private key, is verified with its public key: handled once", async () => {
    simulator.registerWebhookEndpoint({ url, secret: endpointKey.whsk });
    const event = simulator.emit('payment_intent.succeeded');
    await simulator.waitForIdle();
    const [request] = simulator.webhookRequests();
    expect(request!.attempts.map((attempt) => attempt.status_code)).toEqual([200]);
    expect(app.app.get(PaidOrders).events).toEqual([event.id]);
  });

  it('a delivery signed with another private key is refused (401), and no log line carries a key', async () => {
    const signed = signWebhook(
      createPaymentEvent('payment_intent.succeeded'),
      standardWebhooksEd25519({ privateKeys: ed25519KeyPair().whsk }),
    );
    expect((await post(url, signed)).status).toBe(401);
    const everything = logger.lines.map((line) => line.message).join('\n');
    for (const key of [endpointKey.whpk, endpointKey.whsk]) expect(everything).not.toContain(key.slice(5));
  });
});
