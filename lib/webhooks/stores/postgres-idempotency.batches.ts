import { PostgresStatementBatch } from '../../postgres/postgres-statement.batch.js';
import type { PostgresQueryResult } from '../../postgres/postgres-sql.util.js';

/** A claim to send: the record, the slot, the event (null: a retrieve's run), the new token, lease and keep (ms). */
export interface ClaimInput {
  readonly key: string;
  readonly slot: string;
  readonly eventId: string | null;
  readonly token: string;
  readonly leaseMs: number;
  readonly keepMs: number;
  readonly exclusive: boolean;
}

/** A completion to send. */
export interface CompleteInput {
  readonly key: string;
  readonly slot: string;
  readonly token: string;
  readonly eventId: string | null;
  readonly retentionMs: number;
  readonly unwatch: boolean;
}

/** What the claim function answers for one claim. */
export type ClaimRow = Record<string, unknown>;

/** Runs one of the store's statements (named prepared statement, or text). */
type RunStatement = (
  part: 'claim' | 'claimMany' | 'complete' | 'completeMany',
  values: unknown[],
) => Promise<PostgresQueryResult>;

/** Largest batch: a few hundred bytes per call, well under any message limit. */
const MAX_BATCH = 256;

/** How the store sends its claims and completions, grouped or one statement per call. */
export interface PostgresIdempotencyStatements {
  claim(input: ClaimInput): Promise<ClaimRow>;
  complete(input: CompleteInput): Promise<void>;
}

const claimValues = (inputs: readonly ClaimInput[]): unknown[] => [
  inputs.map((input) => input.key),
  inputs.map((input) => input.slot),
  inputs.map((input) => input.eventId),
  inputs.map((input) => input.token),
  inputs.map((input) => input.leaseMs),
  inputs.map((input) => input.keepMs),
  inputs.map((input) => input.exclusive),
];

/**
 * The claims and the completions of `PostgresIdempotencyStore`. Grouped (the default), the calls of one
 * turn of the event loop share a statement over arrays (`PostgresStatementBatch`; the function takes
 * their rows one by one in key order, so two handlers of one intent share a batch too) and a lone call
 * goes as the one-row statement; otherwise every call sends the one-row statement at once.
 */
export function postgresIdempotencyStatements(run: RunStatement, grouped: boolean): PostgresIdempotencyStatements {
  const claimOne = async (input: ClaimInput): Promise<ClaimRow> => {
    const { rows } = await run('claim', [
      input.key,
      input.slot,
      input.eventId,
      input.token,
      input.leaseMs,
      input.keepMs,
      input.exclusive,
    ]);
    return rows[0]!;
  };
  const completeOne = async (input: CompleteInput): Promise<void> => {
    await run('complete', [input.key, input.slot, input.token, input.eventId, input.retentionMs, input.unwatch]);
  };
  if (!grouped) return { claim: claimOne, complete: completeOne };
  const claims = new PostgresStatementBatch<ClaimInput, ClaimRow>(
    async (inputs) => {
      if (inputs.length === 1) return [await claimOne(inputs[0]!)];
      const { rows } = await run('claimMany', claimValues(inputs));
      const byIndex = new Map<number, ClaimRow>(rows.map((row) => [Number(row['i']), row]));
      return inputs.map((_, i) => byIndex.get(i + 1)!);
    },
    MAX_BATCH,
    false,
  );
  const completes = new PostgresStatementBatch<CompleteInput, void>(
    async (inputs) => {
      if (inputs.length === 1) await completeOne(inputs[0]!);
      else {
        await run('completeMany', [
          inputs.map((input) => input.key),
          inputs.map((input) => input.slot),
          inputs.map((input) => input.token),
          inputs.map((input) => input.eventId),
          inputs.map((input) => input.retentionMs),
          inputs.map((input) => input.unwatch),
        ]);
      }
      return new Array<void>(inputs.length);
    },
    MAX_BATCH,
    false,
  );
  return { claim: (input) => claims.add(input), complete: (input) => completes.add(input) };
}
