import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, type PaymentEvent, type PaymentEventContext } from '../../../lib/index.js';

/** The merchant's own table: plain INSERTs, no unique constraint, so a second run would show as a second row. */
export const LEDGER_SQL = `CREATE TABLE IF NOT EXISTS ledger (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL,
  handler text NOT NULL,
  amount integer NOT NULL
)`;

/**
 * A merchant handler written with plain `pg` through `ctx.transaction`: one INSERT into the ledger,
 * then whatever `behaviour` does (throw, wait for the test). `runs` counts invocations.
 */
@Injectable()
export class LedgerHandler {
  runs: string[] = [];
  behaviour: (event: PaymentEvent) => Promise<void> | void = () => undefined;

  @OnPaymentEvent('payment_intent.succeeded', { transactional: true })
  async paid(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    this.runs.push(event.id);
    await ctx.transaction!.query('INSERT INTO ledger (event_id, handler, amount) VALUES ($1, $2, $3)', [
      event.id,
      'paid',
      100,
    ]);
    await this.behaviour(event);
  }

  /** Not transactional: runs at least once, outside any transaction (ctx.transaction is undefined). */
  @OnPaymentEvent('payment_intent.succeeded')
  notify(_event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): void {
    this.sawTransaction.push(ctx.transaction !== undefined);
  }
  sawTransaction: boolean[] = [];

  reset(): void {
    this.runs = [];
    this.sawTransaction = [];
    this.behaviour = () => undefined;
  }
}

/**
 * The inbox rows that hold an event's handler runs: one row per handler slot of the event's record
 * (`i:<intent>/<state>|<handler>` for an intent's state, `e:<event>/<handler>` otherwise), counted when
 * the event's run is in it (its id, or `*`: a retrieve's run of its state). `$1` the record key, `$2`
 * the event id.
 */
export const INBOX_KEY_OF = `(key LIKE $1 || '/%' AND ($2 = ANY(done) OR '*' = ANY(done)))`;

/** The values of `INBOX_KEY_OF` for `event`. */
export function inboxKeys(event: PaymentEvent): [string, string] {
  const [kind] = event.event.split('.') as [string, string];
  const intent = (event.data as Record<string, { id?: string } | undefined>)[kind]?.id;
  const intentRecord = (kind === 'payment_intent' || kind === 'setup_intent') && intent !== undefined;
  return [intentRecord ? `i:${intent.toLowerCase()}` : `e:${event.id}`, event.id];
}
