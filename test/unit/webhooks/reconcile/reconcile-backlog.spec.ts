import 'reflect-metadata';
import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { PaymentIntent } from '../../../../lib/index.js';
import type { PaymentEventsDispatch } from '../../../../lib/webhooks/contracts/dispatch-result.types.js';
import { PaymentsReconciler, type ReconcileClient } from '../../../../lib/webhooks/reconcile/payments-reconciler.js';
import { MemoryIntentWatchStore } from '../../../../lib/webhooks/stores/memory-intent-watch.store.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

/*
 * A backlog (issue 31, item 4), on Jest's fake clock: the sweeps of one instance go on at the retrieve
 * rate while full batches come back, and a new intent's first check comes before the backlog's.
 */
describe('PaymentsReconciler under a backlog', () => {
  beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
  const start = Date.parse('2026-11-26T00:00:00Z');
  beforeEach(() => {
    jest.useFakeTimers({ now: start, doNotFake: ['nextTick', 'queueMicrotask'] });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  /** Answers every retrieve 'processing' after 300 ms, noting when each intent was retrieved. */
  const service = () => {
    const retrieved = new Map<string, number>();
    const retrieve = async (id: string): Promise<PaymentIntent> => {
      retrieved.set(id, Date.now());
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { id, state: 'processing' } as unknown as PaymentIntent;
    };
    const client: ReconcileClient = { paymentIntents: { retrieve }, setupIntents: { retrieve } };
    return { client, retrieved };
  };
  const unused: PaymentEventsDispatch = {
    dispatch: () => Promise.reject(new Error('no terminal state in this test')),
  };

  function reconcilerOver(list: MemoryIntentWatchStore, client: ReconcileClient) {
    const options = validatePaymentsOptions(
      fixtureOptions({
        reconcile: { afterSeconds: 0, everySeconds: 30, batchSize: 100, maxRetrievesPerSecond: 10 },
      }),
    );
    const webhooks = options.webhooks as Exclude<typeof options.webhooks, false>;
    const runtime = {
      now: () => Date.now(),
      sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
      random: () => 0.5,
    };
    return new PaymentsReconciler(webhooks, list, unused, client, runtime);
  }

  /** Shuts down, moving the fake clock so that the sweep in flight ends its batch. */
  async function shutDown(reconciler: PaymentsReconciler): Promise<void> {
    let done = false;
    const closed = reconciler.onApplicationShutdown().finally(() => (done = true));
    for (let t = 0; t < 60_000 && !done; t += 500) await jest.advanceTimersByTimeAsync(500);
    await closed;
  }

  it('sweeps a backlog at the retrieve rate: the next batch starts when a full one ends, not a tick later', async () => {
    const list = new MemoryIntentWatchStore();
    for (let n = 0; n < 350; n++) {
      list.watch({ kind: 'payment_intent', id: `old-${n}`, createdAt: start, nextCheckAt: start - 1, checks: 5 });
    }
    const { client, retrieved } = service();
    const reconciler = reconcilerOver(list, client);
    reconciler.onApplicationBootstrap();
    try {
      // First tick at 30 s; 350 retrieves at 10/s take 35 s: all done before the second tick (60 s).
      await jest.advanceTimersByTimeAsync(30_000 + 35_000 + 2_000);
      expect(retrieved.size).toBe(350);
      const times = [...retrieved.values()];
      expect(Math.max(...times) - Math.min(...times)).toBeLessThan(36_000);
    } finally {
      await shutDown(reconciler);
    }
  });

  it('checks a new intent within a few starts of the running batch, ahead of the backlog that was there before it', async () => {
    const list = new MemoryIntentWatchStore();
    for (let n = 0; n < 1_000; n++) {
      list.watch({ kind: 'payment_intent', id: `old-${n}`, createdAt: start, nextCheckAt: start - 1, checks: 5 });
    }
    const { client, retrieved } = service();
    const reconciler = reconcilerOver(list, client);
    reconciler.onApplicationBootstrap();
    try {
      await jest.advanceTimersByTimeAsync(31_000); // the first batch is under way
      await reconciler.watch('payment_intent', '7c2f0a8e-4a51-4e0f-9a41-0f3f3c1d2b10');
      const createdAt = Date.now();
      await jest.advanceTimersByTimeAsync(25_000);
      const first = retrieved.get('7c2f0a8e-4a51-4e0f-9a41-0f3f3c1d2b10');
      expect(first).toBeDefined();
      // Looked for every 10 starts (1 s at 10/s) while the batch runs: not behind its 70 other intents,
      // nor behind the 900 of the backlog.
      expect(first! - createdAt).toBeLessThanOrEqual(2_000);
      expect([...retrieved.keys()].indexOf('7c2f0a8e-4a51-4e0f-9a41-0f3f3c1d2b10')).toBeLessThanOrEqual(25);
      // The batch still checks 100 in all: the backlog intent it displaced waits for the next one.
      expect(retrieved.size).toBeGreaterThanOrEqual(200);
    } finally {
      await shutDown(reconciler);
    }
  });
});
