import type { PaymentsQueryResult } from '../contracts/payments-transaction-runner.interface.js';

/** What a driver answered a statement, as far as it tells. */
export interface QueryAnswer {
  readonly rows: readonly Record<string, unknown>[];
  readonly rowCount?: number | null;
  readonly command?: string;
}

/**
 * The rows as an array that also carries `rows`, `rowCount` and `command`, non-enumerable: code that
 * compares or serialises the rows (as `query` returned them until now) sees the rows only.
 */
export function queryResultOf<R extends Record<string, unknown>>(answer: QueryAnswer): PaymentsQueryResult<R> {
  const rows = (Array.isArray(answer.rows) ? answer.rows : []) as R[];
  return Object.defineProperties(rows, {
    rows: { value: rows, configurable: true },
    rowCount: { value: answer.rowCount ?? null, configurable: true },
    command: { value: answer.command, configurable: true },
  }) as PaymentsQueryResult<R>;
}

/**
 * A driver's answer read as a `QueryAnswer`: node-postgres' `QueryResult` (`rows`, `rowCount`,
 * `command`); postgres-js' rows array (`count`, `command` on it); or a bare rows array.
 */
export function queryAnswerOf(result: unknown): QueryAnswer {
  if (Array.isArray(result)) {
    const { count, command } = result as unknown as { count?: unknown; command?: unknown };
    return {
      rows: result as Record<string, unknown>[],
      rowCount: typeof count === 'number' ? count : null,
      command: typeof command === 'string' ? command : undefined,
    };
  }
  const { rows, rowCount, command } = (result ?? {}) as { rows?: unknown; rowCount?: unknown; command?: unknown };
  return {
    rows: Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [],
    rowCount: typeof rowCount === 'number' ? rowCount : null,
    command: typeof command === 'string' ? command : undefined,
  };
}
