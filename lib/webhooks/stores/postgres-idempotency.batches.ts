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

/** How the store sends its claims and completions, grouped or one statement per call. */
export interface PostgresIdempotencyStatements {
  /** The attempt number, or undefined when the row was not taken (done, or leased by someone else). */
  claim(input: ClaimInput): Promise<number | undefined>;
  complete(input: CompleteInput): Promise<void>;
}

/**
 * The claims and the completions of `PostgresIdempotencyStore`. Grouped (the default), the calls of one
 * turn of the event loop share a statement over arrays (`PostgresStatementBatch`) and a lone call goes as
 * the one-row statement; otherwise every call sends the one-row statement at once.
 */
export function postgresIdempotencyStatements(run: RunStatement, grouped: boolean): PostgresIdempotencyStatements {
  const claimOne = async ({ key, token, leaseMs, ttlMs }: ClaimInput): Promise<number | undefined> => {
    const row = (await run('claim', [key, token, leaseMs, ttlMs])).rows[0];
    return row === undefined ? undefined : Number(row['attempt']);
  };
  const completeOne = async ({ key, token, retentionMs }: CompleteInput): Promise<void> => {
    await run('complete', [key, token, retentionMs]);
  };
  if (!grouped) return { claim: claimOne, complete: completeOne };
  const claims = new PostgresStatementBatch<ClaimInput, number | undefined>(async (inputs) => {
    if (inputs.length === 1) return [await claimOne(inputs[0]!)];
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
    if (inputs.length === 1) await completeOne(inputs[0]!);
    else {
      await run('completeMany', [
        inputs.map((input) => input.key),
        inputs.map((input) => input.token),
        inputs.map((input) => input.retentionMs),
      ]);
    }
    return new Array<void>(inputs.length);
  }, MAX_BATCH);
  return { claim: (input) => claims.add(input), complete: (input) => completes.add(input) };
}
