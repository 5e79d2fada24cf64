import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { PaymentsError } from '../../errors/payments.errors.js';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { PAYMENT_EVENTS_REGISTRY, PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import type { DispatchHandlerResult } from '../contracts/dispatch-result.types.js';
import type { DispatchClaim, PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import type { PaymentEvent, PaymentEventContext } from '../contracts/payment-event.types.js';
import type {
  PaymentEventHandlerRegistration,
  PaymentEventHandlers,
} from '../contracts/payment-event-handler.types.js';
import { IdempotencyStore } from '../contracts/idempotency-store.interface.js';
import { postgresSchemaReadySql } from '../../postgres/postgres-sql.util.js';
import type { PaymentsTransaction } from '../contracts/payments-transaction-runner.interface.js';
import { preparePgStatement } from './pg-transaction.runner.js';
import { RUN_AFTER_FIRST_STATEMENT, runsAfterFirstStatement } from './pg-first-statement.js';
import { isConnectionEnded } from '../../postgres/postgres-pool-errors.js';
import {
  DEFAULT_PAYMENTS_INBOX_TABLE,
  type ResolvedPaymentsTransactionsOptions,
} from './payments-transactions.options.js';
import { inboxSchemaStatements, paymentsInboxSql, type PaymentsInboxSql } from './payments-inbox.sql.js';
import { retryCompleteLater, retryReleaseLater } from '../support/claim-release.retry.js';
import { webhooksLogger } from '../support/payments-webhooks.logger.js';
import { checkTransactionalHandlers } from '../support/transactional-handlers.check.js';

export { paymentsInboxSchema } from './payments-inbox.sql.js';

/** Thrown inside the transaction to roll it back when a concurrent delivery holds the (event, handler). */
class InboxBusy extends PaymentsError {}

/** SQLSTATEs of a concurrent `CREATE ... IF NOT EXISTS` losing a race on the catalog. */
const CREATE_RACE_CODES = new Set(['23505', '42P07', '42710']);

/**
 * The transactional inbox: runs a handler inside a PostgreSQL transaction (opened by the configured
 * `PaymentsTransactionRunner`) that first takes the (event id, handler) and writes its completion
 * record, then runs the handler, then commits both together. The dispatcher hands it every handler
 * that `covers()` after the idempotency store granted a claim, inline or in a queue worker.
 *
 * In one statement, the transaction takes `pg_try_advisory_xact_lock` on the key (never waits: a
 * copy in flight elsewhere gets `busy`, answered 409) and inserts the record unless a live one exists
 * (then the handler already committed: `skipped`); only when that statement answers no row does a
 * second one (`claimFlags`, lib/webhooks/transactional/payments-inbox.sql.ts) tell the two apart. A throw rolls back the handler's writes and the
 * record together (`failed`, 500); a failure of the database itself (begin, the inbox statement,
 * commit) is `store_unavailable` (503). Either way the store's claim is released, so the redelivery
 * runs the handler again from a clean state. The store's `complete` after the commit only saves the
 * next redelivery a transaction: the inbox row is the proof.
 */
@Injectable()
export class PaymentsInbox implements OnModuleInit, PaymentsDispatchPlugin {
  readonly name = 'inbox';

  private readonly logger: Logger;
  private readonly options: ResolvedPaymentsTransactionsOptions | undefined;
  private readonly retentionMs: number;
  private readonly sql: PaymentsInboxSql;
  private schema: Promise<void> | undefined;
  private runsSinceCleanup = 0;
  private cleanup: Promise<unknown> | undefined;

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions,
    @Inject(IdempotencyStore) private readonly store: IdempotencyStore,
    @Inject(PAYMENTS_RUNTIME) private readonly runtime: PaymentsRuntime,
    @Inject(PAYMENT_EVENTS_REGISTRY) private readonly registry: PaymentEventHandlers,
  ) {
    this.logger = webhooksLogger(webhooks);
    this.options = webhooks.transactions;
    this.retentionMs = webhooks.retentionSeconds * 1000;
    this.sql = paymentsInboxSql(this.options?.table ?? DEFAULT_PAYMENTS_INBOX_TABLE);
    // Sent prepared by pgTransactionRunner (once per connection); other runners send them as text.
    preparePgStatement('payments_inbox_claim', this.sql.claim);
    preparePgStatement('payments_inbox_claim_flags', this.sql.claimFlags);
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

  /** The dispatcher's hook around a handler run: the handlers the inbox covers. */
  runsHandler(handler: PaymentEventHandlerRegistration): boolean {
    return this.covers(handler);
  }

  /** The dispatcher's hook around a handler run: `run` under the claim the dispatcher got. */
  runHandler(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    ctx: PaymentEventContext,
    claim: DispatchClaim,
  ): Promise<DispatchHandlerResult> {
    return this.run(handler, event, ctx, claim.key, claim.token);
  }

  /**
   * Runs a claimed handler in the inbox transaction, then completes (or releases) the store's claim
   * under `token`. Never rejects.
   */
  async run(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    ctx: PaymentEventContext,
    key: string,
    token: string,
  ): Promise<DispatchHandlerResult> {
    const options = this.options!;
    const where = `event ${event.id} (${event.event}) handler ${handler.id}`;
    const attempt = ctx.deliveryAttempt;
    let started: number | undefined;
    let handlerError: { error: unknown } | undefined;
    let outcome: 'done' | 'skipped';
    try {
      await this.ensureSchema(options);
      const claim = { text: this.sql.claim, values: [key, this.retentionMs] };
      const work = async (
        tx: PaymentsTransaction,
        claimRows?: Record<string, unknown>[],
      ): Promise<'done' | 'skipped'> => {
        const [claimed] = claimRows ?? (await tx.query(claim.text, claim.values));
        if (claimed === undefined) {
          // Not both locked and inserted (a redelivery the store forgot, or a copy in flight): which one?
          const [row] = await tx.query(this.sql.claimFlags, claim.values);
          if (row === undefined || row['locked'] !== true) throw new InboxBusy();
          if (Number(row['inserted']) !== 1) return 'skipped';
        }
        started = this.runtime.now();
        try {
          // Written out, not `{ ...ctx, transaction }`: on Node 20 that gives every context a map of its own.
          const context: PaymentEventContext = Object.freeze({
            retrieveIntent: ctx.retrieveIntent,
            deliveryAttempt: ctx.deliveryAttempt,
            receivedAt: ctx.receivedAt,
            source: ctx.source,
            transaction: tx,
          });
          await handler.invoke(event, context);
        } catch (error) {
          handlerError = { error };
          throw error;
        }
        return 'done';
      };
      // pgTransactionRunner sends BEGIN and the claim in one exchange (lib/postgres/postgres-begin.pipeline.ts).
      const runner = options.runner;
      const transact = (): Promise<'done' | 'skipped'> =>
        runsAfterFirstStatement(runner) ? runner[RUN_AFTER_FIRST_STATEMENT](claim, work) : runner.run((tx) => work(tx));
      try {
        outcome = await transact();
      } catch (error) {
        // A pooled connection the server ended while it sat idle, handed out before node-postgres read the
        // end: nothing of this transaction ran (the handler had not started), so once more on another one.
        if (started !== undefined || !isConnectionEnded(error)) throw error;
        outcome = await transact();
      }
    } catch (error) {
      const durationMs = started === undefined ? undefined : this.runtime.now() - started;
      await this.release(key, token, where);
      if (error instanceof InboxBusy) {
        // Anyone can resend a delivery in flight: not a warning, and the store's 409 lines are sampled.
        this.logger.debug(`Busy ${where}: a concurrent delivery holds it in the inbox`);
        return { handler: handler.id, status: 'busy' };
      }
      if (handlerError !== undefined && handlerError.error === error) {
        this.logger.error(
          `Failed ${where} in ${durationMs} ms (attempt ${attempt}): ${describe(error)}; transaction rolled back, claim released for redelivery`,
          error instanceof Error ? error.stack : undefined,
        );
        return { handler: handler.id, status: 'failed', durationMs, attempt, error };
      }
      this.logger.error(`Inbox transaction of ${where} failed: rolled back, nothing committed (${describe(error)})`);
      return {
        handler: handler.id,
        status: 'store_unavailable',
        ...(durationMs === undefined ? {} : { durationMs }),
        attempt,
        error,
      };
    }
    const durationMs = started === undefined ? undefined : this.runtime.now() - started;
    try {
      await this.store.complete(key, token, this.retentionMs);
    } catch (error) {
      // Committed, and the inbox row says so. Until the store records it the claim stays leased and a
      // redelivery gets 409 (it never reaches the row that would skip it): completed again in the background.
      this.logger.warn(
        `Handled ${where} (committed), but the store could not record it: ${describe(error)}; retrying in the background`,
      );
      retryCompleteLater(this.store, key, token, this.retentionMs);
    }
    this.maybeCleanUp(options);
    // A delivery that went well logs nothing here (docs/logging.md); `webhooks.logDeliveries` gives its one line.
    if (outcome === 'skipped') return { handler: handler.id, status: 'skipped' };
    return { handler: handler.id, status: 'done', ...(durationMs === undefined ? {} : { durationMs }), attempt };
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

  private async release(key: string, token: string, where: string): Promise<void> {
    try {
      await this.store.release(key, token);
    } catch (error) {
      // Retried in the background for ~30 s, else the lease ends after claimTtlSeconds; until then a
      // redelivery is answered 409 (the inbox already keeps copies apart).
      this.logger.warn(`Could not release the claim of ${where}: ${describe(error)}; retrying in the background`);
      retryReleaseLater(this.store, key, token);
    }
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

/** Name and message of an error, for a log line (handlers' errors are the merchant's own text). */
function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error;
}
