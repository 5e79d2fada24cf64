import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication } from '@nestjs/common';
import { join } from 'node:path';
import { OnPaymentEvent, type PaymentEvent, type PaymentEventContext } from '../../../../../lib/index.js';
import type { PaymentDeliveryRecord } from '../../../../../lib/webhooks/index.js';
import { transpileToCache, type TranspiledTree } from '../../../../fixtures/transpile.fixture.js';
import { CliProcess, cliForwardingToApp } from './cli-process.fixture.js';

/*
 * Issue 42: events out of order, driven from the command-line simulator as a merchant would drive it.
 * The receiving app opts its handlers into current-state handling (`{ current: true }`): a late
 * `requires_capture` after `succeeded` is answered `superseded` and its handler does not run; a real
 * `errored_capture` (the intent moved there) runs its handler, with the retrieved intent.
 */

interface Run {
  handler: string;
  intent: string;
  state: string | undefined;
}

@Injectable()
class Orders {
  readonly runs: Run[] = [];

  @OnPaymentEvent('payment_intent.succeeded', { current: true })
  paid(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): void {
    this.runs.push({ handler: 'paid', intent: String(event.data.payment_intent?.id), state: ctx.intent?.state });
  }

  @OnPaymentEvent('payment_intent.requires_capture', { current: true })
  authorized(event: PaymentEvent<'payment_intent.requires_capture'>, ctx: PaymentEventContext): void {
    this.runs.push({ handler: 'authorized', intent: String(event.data.payment_intent?.id), state: ctx.intent?.state });
  }

  @OnPaymentEvent('payment_intent.errored_capture', { current: true })
  captureFailed(event: PaymentEvent<'payment_intent.errored_capture'>, ctx: PaymentEventContext): void {
    this.runs.push({
      handler: 'captureFailed',
      intent: String(event.data.payment_intent?.id),
      state: ctx.intent?.state,
    });
  }
}

describe('npx nestjs-payments simulator: events out of order against current-state handling', () => {
  let tree: TranspiledTree;
  let sim: CliProcess;
  let app: INestApplication;
  let orders: Orders;
  const deliveries: PaymentDeliveryRecord[] = [];

  beforeAll(async () => {
    tree = transpileToCache('payments-cli-current-state', ['lib']);
    ({ sim, app } = await cliForwardingToApp(
      join(tree.dir, 'lib', 'testing', 'simulator', 'cli', 'main.js'),
      [Orders],
      {
        deliveryListener: { onDelivery: (record) => void deliveries.push(record) },
      },
    ));
    orders = app.get(Orders);
  }, 60_000);
  afterAll(async () => {
    sim?.kill();
    await app?.close();
    tree?.remove();
  });

  const runsOf = (intent: string) => orders.runs.filter((run) => run.intent === intent);
  const answersTo = (type: string) => deliveries.filter((d) => d.type === type).map((d) => [d.status, d.outcome]);

  it('[W12] `pay`, then `late payment_intent.requires_capture <id>`: answered 200 superseded, its handler never runs', async () => {
    let from = sim.stdout.length;
    sim.send('pay 1500');
    const [, intent] = await sim.waitFor(/payment intent (\S+) \(amount 1500\) confirmed: succeeded/, from);
    await sim.waitFor(/<-- \[200\] payment_intent\.succeeded /, from);
    expect(runsOf(intent!)).toEqual([{ handler: 'paid', intent, state: 'succeeded' }]);

    from = sim.stdout.length;
    sim.send(`late payment_intent.requires_capture ${intent}`);
    await sim.waitFor(/<-- \[200\] payment_intent\.requires_capture /, from);
    expect(answersTo('payment_intent.requires_capture')).toEqual([[200, 'superseded']]);
    // Superseded: the current state (succeeded) was dispatched instead, and its handler had already run.
    expect(runsOf(intent!)).toEqual([{ handler: 'paid', intent, state: 'succeeded' }]);
  });

  it('[L2] `pay`, then `trigger payment_intent.errored_capture <id>` (a real move): its handler runs, on the retrieved intent', async () => {
    let from = sim.stdout.length;
    sim.send('pay 2500');
    const [, intent] = await sim.waitFor(/payment intent (\S+) \(amount 2500\) confirmed: succeeded/, from);
    await sim.waitFor(/<-- \[200\] payment_intent\.succeeded /, from);

    from = sim.stdout.length;
    sim.send(`trigger payment_intent.errored_capture ${intent}`);
    await sim.waitFor(/<-- \[200\] payment_intent\.errored_capture /, from);
    expect(runsOf(intent!)).toEqual([
      { handler: 'paid', intent, state: 'succeeded' },
      { handler: 'captureFailed', intent, state: 'errored_capture' },
    ]);
    expect(answersTo('payment_intent.errored_capture')).toEqual([[200, 'handled']]);
  });
});
