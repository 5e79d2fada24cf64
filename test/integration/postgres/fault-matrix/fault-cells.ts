import type { FaultName } from '../apps/fault-codes.js';

/** The rows of the fault matrix: where a delivery is hit, and how (see apps/fault-merchant.main.ts). */
export interface FaultRow {
  /** The fault, named in the event id (apps/fault-codes.ts). */
  fault: FaultName;
  point: string;
  how: string;
  /** The app process is SIGKILLed at that point (then restarted). */
  kill?: true;
  /** The private PostgreSQL is restarted while the handler runs. */
  restart?: true;
}

export const FAULT_ROWS: readonly FaultRow[] = [
  { fault: 'none', point: 'no fault', how: 'control: one delivery, one redelivery' },
  { fault: 'before-claim', point: 'before the claim', how: 'the idempotency store rejects the claim' },
  {
    fault: 'after-claim',
    point: 'after the claim, before the handler',
    how: "the transaction's backend is terminated (pg_terminate_backend from a second connection) before the inbox statement",
  },
  { fault: 'throw', point: 'in the handler', how: 'the handler throws after its INSERT' },
  {
    fault: 'sql-abort',
    point: 'in the handler',
    how: 'a caught SQL error (division by zero) aborts the transaction; the next statement fails (25P02)',
  },
  {
    fault: 'terminate',
    point: 'in the handler',
    how: "the handler's backend is terminated (pg_terminate_backend) after its INSERT",
  },
  { fault: 'timeout', point: 'in the handler', how: "SET LOCAL statement_timeout = '100ms', then a 5 s statement" },
  { fault: 'commit-error', point: 'at COMMIT', how: 'a deferred constraint trigger raises at COMMIT' },
  {
    fault: 'commit-rollback',
    point: 'at COMMIT',
    how: 'the handler catches a unique violation: COMMIT is answered ROLLBACK',
  },
  {
    fault: 'commit-lost',
    point: 'at COMMIT',
    how: 'COMMIT reaches the server, then the connection breaks: outcome unknown to the app (committed)',
  },
  { fault: 'after-commit', point: 'after COMMIT, before the answer', how: "the store's complete() rejects" },
  { fault: 'kill-before-claim', point: 'before the claim', how: 'SIGKILL', kill: true },
  {
    fault: 'kill-after-claim',
    point: 'after the claim, before the handler',
    how: 'SIGKILL (the lease is left behind)',
    kill: true,
  },
  { fault: 'kill-in-handler', point: 'in the handler', how: 'SIGKILL after the INSERT', kill: true },
  { fault: 'kill-at-commit', point: 'at COMMIT', how: 'SIGKILL before COMMIT is sent', kill: true },
  {
    fault: 'kill-after-commit',
    point: 'after COMMIT, before the answer',
    how: 'SIGKILL once COMMIT is answered',
    kill: true,
  },
  {
    fault: 'slow',
    point: 'PostgreSQL restarted mid-run',
    how: 'pg_ctl restart -m fast while the handler runs (private cluster)',
    restart: true,
  },
];
