import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { PaymentsAuthenticationError, PaymentsConfigurationError, PaymentsModule } from '../../../lib/index.js';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { bootClient, INTENT_ID } from './support/client-fixture.js';

/**
 * [A3] Sandbox keys work only against the sandbox base address and production keys only against
 * production: the environment is a required option, and a key used against the other environment's
 * address (the simulator is a sandbox that knows only its own keys) ends in a typed 401 whose message
 * says so, without the key.
 */
describe('[A3] environment and base address', () => {
  const sandboxKey = 'sk_test_sandbox_key_a3';
  const productionKey = 'sk_live_production_key_a3';
  let sim: PaymentsSimulator;
  let sandboxUrl: string;

  beforeAll(async () => {
    sim = new PaymentsSimulator({ apiKeys: [sandboxKey] });
    sandboxUrl = await sim.start();
  });
  afterAll(async () => sim.stop());

  it('[A3] the sandbox key works against the sandbox base address', async () => {
    const { payments, close } = await bootClient(sandboxUrl, { apiKey: sandboxKey });
    try {
      const created = await payments.paymentIntents.create({ amount: 1000 });
      expect((await payments.paymentIntents.retrieve(created.id)).id).toBe(created.id);
    } finally {
      await close();
    }
  });

  it('[A3] a production key against the sandbox base address gets PaymentsAuthenticationError naming the environment rule', async () => {
    const { payments, close } = await bootClient(sandboxUrl, { apiKey: productionKey, environment: 'production' });
    try {
      const error = await payments.paymentIntents.retrieve(INTENT_ID).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PaymentsAuthenticationError);
      const message = (error as Error).message;
      expect(message).toContain('sandbox keys only work against the sandbox base address');
      expect(message).toContain('production keys only against the production base address');
      expect(message).not.toContain(productionKey);
    } finally {
      await close();
    }
  });

  it('[A3] the environment is required, so a key is never used without saying which one it is', async () => {
    const boot = Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiKey: sandboxKey,
          baseUrl: sandboxUrl,
          allowInsecureHttp: true,
          webhooks: false,
        } as unknown as Parameters<typeof PaymentsModule.forRoot>[0]),
      ],
    }).compile();
    await expect(boot).rejects.toThrow(PaymentsConfigurationError);
    await expect(boot).rejects.toThrow(/`environment`/);
  });
});
