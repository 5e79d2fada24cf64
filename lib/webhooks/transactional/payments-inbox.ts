import { randomUUID } from 'node:crypto';
import { recurs } from '../records/record-keys.js';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HandlerCallUnavailableError } from '../../errors/payments.errors.js';
import { PaymentsError } from '../../errors/payments.errors.js';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { PAYMENT_EVENTS_REGISTRY, PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import {
  type HandlerCall,
  type HandlerCallOutcome,
  type PaymentsDispatchPlugin,
} from '../contracts/dispatch-plugin.interface.js';
import type { PaymentEventContext } from '../contracts/payment-event.types.js';
import type {
  PaymentEventHandlerRegistration,
  PaymentEventHandlers,
} from '../contracts/payment-event-handler.types.js';
import { postgresSchemaReadySql } from '../../postgres/postgres-sql.util.js';
import type { PaymentsTransaction } from '../contracts/payments-transaction-runner.interface.js';
import { preparePgStatement } from './pg-transaction.runner.js';
import { RUN_AFTER_FIRST_STATEMENT, runsAfterFirstStatement } from './pg-first-statement.js';
import { endedConnectionRetries, isConnectionEnded } from '../../postgres/postgres-pool-errors.js';
import {
  DEFAULT_PAYMENTS_INBOX_TABLE,
  type ResolvedPaymentsTransactionsOptions,
} from './payments-transactions.options.js';
import { inboxSchemaStatements, paymentsInboxSql, type PaymentsInboxSql } from './payments-inbox.sql.js';
import { webhooksLogger } from '../log/receiver.logger.js';
import { checkTransactionalHandlers } from './transactional-handlers.check.js';

export { paymentsInboxSchema } from './payments-inbox.sql.js';

/** Thrown inside the transaction to roll it back when a concurrent delivery holds the run's inbox row. */
class InboxBusy extends PaymentsError {}

/** SQLSTATEs of a concurrent `CREATE ... IF NOT EXISTS` losing a race on the catalog. */
const CREATE_RACE_CODES = new Set(['23505', '42P07', '42710']);

/**
 * The transactional inbox, a plug-in of the dispatcher around a handler call: for every handler it
 * `handles`, the dispatcher claims the run in the idempotency store and hands the call to
 * `aroundHandler`, which runs it inside a PostgreSQL transaction (opened by the configured
 * `PaymentsTransactionRunner`) that first records the run in the inbox row of its slot, then runs the
 * handler, then commits both together. Claiming, renewing, completing and releasing stay the dispatcher's.
 *
 * In one statement, the transaction takes `pg_try_advisory_xact_lock` on the row's key (never waits:
 * a copy in flight elsewhere gets `busy`, answered 409) and records the event in the row unless the
 * run already happened (then the handler already committed: `skipped`). A throw rolls back the
 * handler's writes and the record together (`failed`, 500); a failure of the database itself (begin,
 * the inbox statement, commit) is a `HandlerCallUnavailableError` (503). Either way the dispatcher
 * releases the run, so the redelivery runs the handler again from a clean state. The store's completion
 * after the commit only saves the next redelivery a transaction: the inbox row is the proof.
 */
@Injectable()
export class PaymentsInbox implements OnModuleInit, PaymentsDispatchPlugin {
  readonly name = 'inbox';
  readonly failureNote = 'transaction rolled back';

  private readonly logger: Logger;
  private readonly options: ResolvedPaymentsTransactionsOptions | undefined;
  private readonly retentionMs: number;
  private readonly sql: PaymentsInboxSql;
  private schema: Promise<void> | undefined;
  private runsSinceCleanup = 0;
  private cleanup: Promise<unknown> | undefined;

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions,
    @Inject(PAYMENTS_RUNTIME) private readonly runtime: PaymentsRuntime,
    @Inject(PAYMENT_EVENTS_REGISTRY) private readonly registry: PaymentEventHandlers,
  ) {
    this.logger = webhooksLogger(webhooks);
    this.options = webhooks.transactions;
    this.retentionMs = webhooks.retentionSeconds * 1000;
    this.sql = paymentsInboxSql(this.options?.table ?? DEFAULT_PAYMENTS_INBOX_TABLE);
    // Sent prepared by pgTransactionRunner (once per connection); other runners send it as text.
    preparePgStatement('payments_inbox_claim', this.sql.claim);
    if (this.options && !this.options.createTable) this.schema = Promise.resolve();
  }

  /** A handler declared `{ transactional: true }` with no `webhooks.transactions` fails the boot, naming the fix. */
  onModuleInit(): void {
    if (!this.options) checkTransactionalHandlers(this.registry);
  }

  /** Whether `handler` runs in a transaction: per its `transactional` option, else per `webhooks.transactions.handlers`. */
  covers(handler: PaymentEventHandlerRegistration): boolean {
    if (this.options === undefined) return false;
    const declared = handler.options?.transactional;
    return declared ?? this.options.handlers === 'all';
  }

  /** The dispatcher's hook around a handler call: the handlers the inbox covers. */
  handles(handler: PaymentEventHandlerRegistration): boolean {
    return this.covers(handler);
  }

  /**
   * Runs a claimed handler call in the inbox transaction: `ran` (committed with its record), `skipped`
   * (its record says it already ran), `busy` (a concurrent transaction holds the row). Rejects with
   * the handler's error (rolled back), or a `HandlerCallUnavailableError` when the database failed.
   */
  async aroundHandler(call: HandlerCall): Promise<HandlerCallOutcome> {
    const options = this.options!;
    const ctx = call.context;
    let started = false;
    let handlerError: { error: unknown } | undefined;
    try {
      await this.ensureSchema(options);
      const claim = {
        text: this.sql.claim,
        values: [`${call.key}/${call.slot}`, call.eventId ?? '*', this.retentionMs, randomUUID(), recurs(call.slot)],
      };
      const work = async (
        tx: PaymentsTransaction,
        claimRows?: Record<string, unknown>[],
      ): Promise<'ran' | 'skipped'> => {
        const [row] = claimRows ?? (await tx.query(claim.text, claim.values));
        if (row === undefined) throw new InboxBusy();
        if (row['runs'] !== true) return 'skipped';
        started = true;
        try {
          // Written out, not `{ ...ctx, transaction }`: on Node 20 that gives every context a map of its own.
          const context: PaymentEventContext = Object.freeze({
            retrieveIntent: ctx.retrieveIntent,
            deliveryAttempt: ctx.deliveryAttempt,
            receivedAt: ctx.receivedAt,
            source: ctx.source,
            handled: ctx.handled,
            intent: ctx.intent,
            transaction: tx,
          });
          await call.invoke(context);
        } catch (error) {
          handlerError = { error };
          throw error;
        }
        return 'ran';
      };
      // pgTransactionRunner sends BEGIN and the claim in one exchange (lib/postgres/postgres-begin.pipeline.ts).
      const runner = options.runner;
      const transact = (): Promise<'ran' | 'skipped'> =>
        runsAfterFirstStatement(runner) ? runner[RUN_AFTER_FIRST_STATEMENT](claim, work) : runner.run((tx) => work(tx));
      let outcome: 'ran' | 'skipped';
      for (let retries = endedConnectionRetries(); ; retries--) {
        try {
          outcome = await transact();
          break;
        } catch (error) {
          // A pooled connection the server ended while it sat idle, handed out before node-postgres read
          // the end: nothing of this transaction ran (the handler had not started), so again on another
          // one; every idle connection may have ended at once (a restart), hence more than one try.
          if (started || retries <= 0 || !isConnectionEnded(error)) throw error;
        }
      }
      this.maybeCleanUp(options);
      return outcome;
    } catch (error) {
      if (error instanceof InboxBusy) {
        // Anyone can resend a delivery in flight: not a warning (the dispatcher's 409 lines are sampled).
        this.logger.debug(`Busy event ${call.event.id} handler ${call.handler.id}: a concurrent transaction holds it`);
        return 'busy';
      }
      if (handlerError !== undefined && handlerError.error === error) throw error;
      throw new HandlerCallUnavailableError('inbox transaction', error);
    }
  }

  /**
   * Deletes up to 500 expired inbox rows (oldest first, by the `expires_at` index), in a transaction
   * of their own; resolves to how many went. Runs in the background every `cleanupEvery` runs.
   */
  async deleteExpired(): Promise<number> {
    const options = this.options;
    if (!options) return 0;
    await this.ensureSchema(options);
    return options.runner.run(async (tx) => (await tx.query(this.sql.cleanup, [])).length);
  }

  /** Creates the table once (in a transaction of its own); a failure is retried on the next delivery. */
  private ensureSchema(options: ResolvedPaymentsTransactionsOptions): Promise<void> {
    if (this.schema !== undefined) return this.schema;
    const statements = inboxSchemaStatements(options.table);
    const ready = postgresSchemaReadySql(options.table, '_expires_at_idx');
    const create = (): Promise<void> =>
      options.runner.run(async (tx) => {
        const [row] = await tx.query(ready.text, ready.values);
        if (row?.['ready'] === true) return;
        // DDL waits for the table's writers: bounded, the next delivery retries.
        await tx.query("SET LOCAL lock_timeout = '5s'", []);
        for (const statement of statements) await tx.query(statement, []);
      });
    const created = create().catch((error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && CREATE_RACE_CODES.has(code)) return create();
      throw error;
    });
    this.schema = created;
    created.catch(() => {
      if (this.schema === created) this.schema = undefined;
    });
    return created;
  }

  private maybeCleanUp(options: ResolvedPaymentsTransactionsOptions): void {
    if (options.cleanupEvery === 0 || this.cleanup !== undefined) return;
    if (++this.runsSinceCleanup < options.cleanupEvery) return;
    this.runsSinceCleanup = 0;
    this.cleanup = this.deleteExpired()
      .catch(() => 0)
      .finally(() => {
        this.cleanup = undefined;
      });
  }
}
