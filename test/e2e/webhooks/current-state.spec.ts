import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, type PaymentEvent, type PaymentEventContext, type PaymentIntent } from '../../../lib/index.js';
import type { PaymentsSimulator } from '../../../lib/testing/index.js';
import type { PaymentDeliveryRecord } from '../../../lib/webhooks/index.js';
import { startReconcileShop, type ReconcileShop } from '../../fixtures/reconcile/reconcile-shop.fixture.js';

/*
 * Issue 42, current-state handling, against the simulator as the service: events delivered out of order
 * never run an opted-in handler for a state the intent has left; a real later state still runs.
 */
@Injectable()
class Orders {
  readonly runs: Array<{ handler: string; intent: string; state: string | undefined; source: string | undefined }> = [];

  private record(handler: string, event: PaymentEvent, ctx: PaymentEventContext): void {
    const intent = ctx.intent as PaymentIntent | undefined;
    this.runs.push({
      handler,
      intent: String((event.data as { payment_intent?: { id?: unknown } }).payment_intent?.id),
      state: intent?.state,
      source: ctx.source,
    });
  }

  @OnPaymentEvent('payment_intent.succeeded', { current: true })
  fulfil(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): void {
    this.record('fulfil', event, ctx);
  }

  @OnPaymentEvent('payment_intent.succeeded', { current: true })
  receipt(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): void {
    this.record('receipt', event, ctx);
  }

  @OnPaymentEvent('payment_intent.requires_capture', { current: true })
  capture(event: PaymentEvent<'payment_intent.requires_capture'>, ctx: PaymentEventContext): void {
    this.record('capture', event, ctx);
  }

  @OnPaymentEvent('payment_intent.errored_capture', { current: true })
  captureFailed(event: PaymentEvent<'payment_intent.errored_capture'>, ctx: PaymentEventContext): void {
    this.record('captureFailed', event, ctx);
  }
}

describe('current-state handling against the simulator', () => {
  let shop: ReconcileShop;
  let sim: PaymentsSimulator;
  let orders: Orders;
  const deliveries: PaymentDeliveryRecord[] = [];
  const gets = (): number => sim.requestCounts().byRoute['GET /payment_intents/:id'] ?? 0;
  const runsOf = (id: string) => orders.runs.filter((run) => run.intent === id).map((run) => run.handler);
  const answersOf = (type: string) => deliveries.filter((d) => d.type === type).map((d) => [d.status, d.outcome]);

  beforeAll(async () => {
    shop = await startReconcileShop([Orders], {
      // GETs are counted: no sweep may add its own (none is due within the test; none is called).
      reconcile: { everySeconds: 3600, afterSeconds: 3600, maxRetrievesPerSecond: 200 },
      deliveryListener: { onDelivery: (record) => void deliveries.push(record) },
    });
    sim = shop.sim;
    orders = shop.app.get(Orders);
  });
  afterAll(async () => {
    await shop?.close();
  });

  it('[W12] succeeded, then a late requires_capture: the requires_capture handler does not run, answered 200 superseded; succeeded handlers ran once', async () => {
    sim.controls.reset();
    const id = await shop.order('succeeded');
    await sim.waitForIdle();
    deliveries.length = 0;
    sim.emit('payment_intent.requires_capture', id, { late: true });
    await sim.waitForIdle();
    expect(answersOf('payment_intent.requires_capture')).toEqual([[200, 'superseded']]);
    expect(runsOf(id).sort()).toEqual(['fulfil', 'receipt']);
    expect(orders.runs.filter((run) => run.intent === id).every((run) => run.state === 'succeeded')).toBe(true);
  });

  it('[L2] succeeded, then a real errored_capture (the intent is in errored_capture): its handler runs, with ctx.intent', async () => {
    sim.controls.reset();
    const id = await shop.order('succeeded');
    await sim.waitForIdle();
    sim.emit('payment_intent.errored_capture', id);
    await sim.waitForIdle();
    expect(runsOf(id)).toContain('captureFailed');
    expect(orders.runs.find((run) => run.intent === id && run.handler === 'captureFailed')).toMatchObject({
      state: 'errored_capture',
      source: 'webhook',
    });
  });

  it('[E2] concurrent deliveries of one intent to two opted-in handlers: exactly one GET', async () => {
    sim.controls.reset().duplicateDeliveries(3, 'concurrent');
    const id = await shop.order('succeeded');
    const before = gets();
    await sim.waitForIdle();
    expect(gets() - before).toBe(1);
    expect(runsOf(id).sort()).toEqual(['fulfil', 'receipt']);
  });

  it('[L1] a retrieve that fails (429 after the client retries) answers 503, runs nothing; the redelivery runs it', async () => {
    deliveries.length = 0;
    sim.controls.reset().hold();
    const id = await shop.order('succeeded');
    sim.controls.rateLimit({ next: 4, retryAfterSeconds: 0 });
    sim.controls.release();
    await sim.waitForIdle();
    const answers = answersOf('payment_intent.succeeded');
    expect(answers[0]).toEqual([503, 'retrieve_failed']);
    expect(answers.at(-1)).toEqual([200, 'handled']);
    expect(runsOf(id).sort()).toEqual(['fulfil', 'receipt']);
  });
});
