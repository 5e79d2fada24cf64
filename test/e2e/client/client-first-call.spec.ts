import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { bootClient, INTENT_ID } from './support/client-fixture.js';
import { ScriptedServer } from './support/scripted-server.js';

describe('PaymentsService before and at its first call (axios is loaded then; real HTTP server on loopback)', () => {
  let server: ScriptedServer;
  let baseUrl: string;

  beforeEach(async () => {
    server = new ScriptedServer();
    baseUrl = await server.listen();
  });

  afterEach(async () => {
    await server.close();
  });

  it('closes a client that never called the API, having opened no connection', async () => {
    const { payments, close } = await bootClient(baseUrl);
    // Called directly: Nest logs, and does not rethrow, what a module's destroy hook throws.
    expect(() => payments.onModuleDestroy()).not.toThrow();
    await expect(close()).resolves.toBeUndefined();
    expect(server.connections).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('answers first calls made at once, then reuses their keep-alive connections', async () => {
    const { payments, close } = await bootClient(baseUrl);
    try {
      server.answer({ status: 200, body: { id: INTENT_ID, state: 'succeeded' } });
      const first = await Promise.all([1, 2, 3].map(() => payments.paymentIntents.retrieve(INTENT_ID)));
      expect(first.map((intent) => intent.id)).toEqual([INTENT_ID, INTENT_ID, INTENT_ID]);
      const opened = server.connections;
      expect(opened).toBeGreaterThanOrEqual(1);
      expect(opened).toBeLessThanOrEqual(3);
      for (let i = 0; i < 3; i++) await payments.paymentIntents.retrieve(INTENT_ID);
      expect(server.requests).toHaveLength(6);
      expect(server.connections).toBe(opened);
    } finally {
      await close();
    }
  });
});
