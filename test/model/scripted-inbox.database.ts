import type { PaymentsTransaction, PaymentsTransactionRunner } from '../../lib/webhooks/index.js';
import { paymentsInboxSql } from '../../lib/webhooks/transactional/payments-inbox.sql.js';
import { DEFAULT_PAYMENTS_INBOX_TABLE } from '../../lib/webhooks/transactional/payments-transactions.options.js';
/** What runs the database's calls: the model's scheduler, or the simulation's engine. */
export interface DatabaseSteps {
  step<T>(kind: string, about: string, faultable: boolean, apply: () => T, local?: boolean): Promise<T>;
  /** Calls whose caller was told they timed out and that may still land. */
  readonly ghosts: ReadonlyArray<{ about: string }>;
}

/** The inbox's one statement, as the production inbox sends it. */
const CLAIM = paymentsInboxSql(DEFAULT_PAYMENTS_INBOX_TABLE).claim;

/** A transaction of the scripted database. */
interface Tx extends PaymentsTransaction {
  readonly id: number;
  /** Rows this transaction wrote, visible to others once it commits. */
  readonly writes: Map<string, string[]>;
  readonly onCommit: Array<() => void>;
  readonly owner: string;
  open: boolean;
}

/**
 * PostgreSQL as the transactional inbox uses it, for the protocol's model check: transactions whose
 * `BEGIN`, inbox statement and `COMMIT` are scheduler steps (each may fail before or after applying, or
 * time out), the inbox statement's semantics (`pg_try_advisory_xact_lock` that never waits, the row's
 * events; lib/webhooks/transactional/payments-inbox.sql.ts, proven on a real PostgreSQL by
 * test/integration/postgres), and the handler's effect committed with the row. A transaction whose
 * `COMMIT` never lands is rolled back by the server when its connection goes (`abortOpen`).
 */
export class ScriptedInboxDatabase {
  private readonly rows = new Map<string, string[]>();
  /** Advisory locks by key: the transaction holding each. */
  private readonly locks = new Map<string, Tx>();
  private seq = 0;

  /** A runner of transactions whose calls go through `sched`; `owner` names who opened them (a process). */
  runner(sched: DatabaseSteps, owner = ''): PaymentsTransactionRunner {
    return {
      run: async <T>(work: (tx: PaymentsTransaction) => Promise<T>): Promise<T> => {
        const tx = this.begin(sched, owner);
        await sched.step('begin', 'BEGIN', true, () => undefined, true);
        let result: T;
        try {
          result = await work(tx);
        } catch (error) {
          this.end(tx, false);
          throw error;
        }
        await sched
          .step('commit', `COMMIT tx${tx.id}`, true, () => this.end(tx, true))
          .catch((error: unknown) => {
            // Not committed as far as the caller knows; if it did not apply, the server rolls back.
            if (tx.open && !sched.ghosts.some((step) => step.about === `COMMIT tx${tx.id}`)) this.end(tx, false);
            throw error;
          });
        return result;
      },
    };
  }

  /** Runs `fn` when `tx` commits (a handler's effect). */
  onCommit(tx: PaymentsTransaction | undefined, fn: () => void): void {
    (tx as Tx).onCommit.push(fn);
  }

  /** The server ends every transaction still open (its COMMIT never landed: the connection went), or those of `owner`. */
  abortOpen(owner?: string): void {
    for (const tx of new Set(this.locks.values())) if (owner === undefined || tx.owner === owner) this.end(tx, false);
  }

  locked(): boolean {
    return this.locks.size > 0;
  }

  key(): string {
    return [
      [...this.rows]
        .map(([key, done]) => `${key}=${done.join('/')}`)
        .sort()
        .join(','),
      [...this.locks]
        .map(([key, tx]) => `${key}@tx${tx.id}`)
        .sort()
        .join(','),
    ].join('|');
  }

  private begin(sched: DatabaseSteps, owner: string): Tx {
    const tx: Tx = {
      id: ++this.seq,
      owner,
      writes: new Map(),
      onCommit: [],
      open: true,
      query: async (text: string, values?: unknown[]) => {
        if (text !== CLAIM) throw new Error(`the scripted database knows only the inbox statement, got: ${text}`);
        return sched.step('inbox', `inbox statement tx${tx.id}`, true, () => this.claim(tx, values ?? []));
      },
    } as unknown as Tx;
    return tx;
  }

  /** The inbox statement: `$1` key, `$2` event id (`*`: a retrieve's run), `$5` whether the state recurs. */
  private claim(tx: Tx, values: unknown[]): Array<Record<string, unknown>> {
    const [key, event, , , recurs] = values as [string, string, number, string, boolean];
    // A statement landing after its transaction rolled back changes nothing (the server discards it).
    if (!tx.open) return [];
    const holder = this.locks.get(key);
    if (holder !== undefined && holder !== tx) return [];
    this.locks.set(key, tx);
    const done = tx.writes.get(key) ?? this.rows.get(key);
    if (done === undefined) {
      tx.writes.set(key, [event]);
      return [{ runs: true }];
    }
    const happened = !recurs || done.includes(event) || done.includes('*') || event === '*';
    if (!happened) {
      tx.writes.set(key, [...done, event]);
      return [{ runs: true }];
    }
    if (recurs && event !== '*' && !done.includes(event) && done.includes('*')) {
      tx.writes.set(
        key,
        done.map((id) => (id === '*' ? event : id)),
      );
    }
    return [{ runs: false }];
  }

  private end(tx: Tx, commit: boolean): void {
    if (!tx.open) return;
    tx.open = false;
    if (commit) {
      for (const [key, done] of tx.writes) this.rows.set(key, done);
      for (const fn of tx.onCommit) fn();
    }
    for (const [key, holder] of [...this.locks]) if (holder === tx) this.locks.delete(key);
  }
}
