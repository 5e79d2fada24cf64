import { PostgresStatementBatch } from '../../postgres/postgres-statement.batch.js';
import type { PostgresQueryResult } from '../../postgres/postgres-sql.util.js';

/** A claim to send: the row's key, the new owner's token, the lease and the state's ttl (ms). */
export interface ClaimInput {
  readonly key: string;
  readonly token: string;
  readonly leaseMs: number;
  readonly ttlMs: number;
}

/** A completion to send. */
export interface CompleteInput {
  readonly key: string;
  readonly token: string;
  readonly retentionMs: number;
}

/** Runs one of the store's statements (named prepared statement, or text). */
type RunStatement = (
  part: 'claim' | 'claimMany' | 'complete' | 'completeMany',
  values: unknown[],
) => Promise<PostgresQueryResult>;

/** Largest batch: 16 bytes of token and a key per call, well under any message limit. */
const MAX_BATCH = 256;

/**
 * The claims and the completions of `PostgresIdempotencyStore`, each grouped per turn of the event loop
 * (`PostgresStatementBatch`): a lone call still goes as the single-row statement, several as one
 * statement over arrays. A claim resolves to its attempt number, or undefined when the row was not
 * taken (done, or leased by someone else: the store then reads its state).
 */
export function postgresIdempotencyBatches(run: RunStatement): {
  claims: PostgresStatementBatch<ClaimInput, number | undefined>;
  completes: PostgresStatementBatch<CompleteInput, void>;
} {
  const claims = new PostgresStatementBatch<ClaimInput, number | undefined>(async (inputs) => {
    if (inputs.length === 1) {
      const { key, token, leaseMs, ttlMs } = inputs[0]!;
      const row = (await run('claim', [key, token, leaseMs, ttlMs])).rows[0];
      return [row === undefined ? undefined : Number(row['attempt'])];
    }
    const { rows } = await run('claimMany', [
      inputs.map((input) => input.key),
      inputs.map((input) => input.token),
      inputs.map((input) => input.leaseMs),
      inputs.map((input) => input.ttlMs),
    ]);
    const attempts = new Map<unknown, number>(rows.map((row) => [row['key'], Number(row['attempt'])]));
    return inputs.map((input) => attempts.get(input.key));
  }, MAX_BATCH);
  const completes = new PostgresStatementBatch<CompleteInput, void>(async (inputs) => {
    if (inputs.length === 1) {
      const { key, token, retentionMs } = inputs[0]!;
      await run('complete', [key, token, retentionMs]);
    } else {
      await run('completeMany', [
        inputs.map((input) => input.key),
        inputs.map((input) => input.token),
        inputs.map((input) => input.retentionMs),
      ]);
    }
    return new Array<void>(inputs.length);
  }, MAX_BATCH);
  return { claims, completes };
}
