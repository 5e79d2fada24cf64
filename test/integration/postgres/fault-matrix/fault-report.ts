import type { FaultRow } from './fault-cells.js';

/** What one cell of the matrix saw. */
export interface CellResult {
  runner: string;
  mode: string;
  fault: string;
  /** HTTP statuses of the deliveries, in order ('no answer' when the process died under it). */
  answers: string[];
  /** Queued mode: failed BullMQ attempts of the job before it completed. */
  attempts?: number | undefined;
  ledger: number;
  inbox: number;
  ms: number;
  problems: string[];
}

const RUNNER_NAMES: Record<string, string> = { pg: 'pg', typeorm: 'TypeORM + CLS', drizzle: 'Drizzle + CLS' };

function outcome(result: CellResult | undefined): string {
  if (result === undefined) return '**not run**';
  const answers = compact(result.answers).join(' → ');
  const flow =
    result.mode === 'queued' ? `${answers}; job done after ${result.attempts ?? '?'} failed attempt(s)` : answers;
  const rows = `${result.ledger} row`;
  return result.problems.length === 0 ? `✅ ${flow}; ${rows}` : `❌ ${flow}; ${rows}: ${result.problems.join('; ')}`;
}

/** `409 409 409` → `409×3`. */
function compact(answers: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < answers.length;) {
    let j = i;
    while (j < answers.length && answers[j] === answers[i]) j += 1;
    out.push(j - i > 1 ? `${answers[i]}×${j - i}` : answers[i]!);
    i = j;
  }
  return out;
}

/** The matrix as a markdown table: one row per fault, one column per runner × mode. */
export function renderMatrix(
  rows: readonly FaultRow[],
  runners: readonly string[],
  modes: readonly string[],
  results: ReadonlyMap<string, CellResult>,
  meta: { durationMs: number; claimTtlSeconds: number },
): string {
  const columns = runners.flatMap((runner) => modes.map((mode) => [runner, mode] as const));
  const all = [...results.values()];
  const green = all.filter((r) => r.problems.length === 0).length;
  const lines = [
    `Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${green}/${all.length} cells green, ${(meta.durationMs / 1000).toFixed(1)} s (claimTtlSeconds ${meta.claimTtlSeconds}).`,
    '',
    `| point | fault | ${columns.map(([r, m]) => `${RUNNER_NAMES[r] ?? r}, ${m}`).join(' | ')} |`,
    `|---|---|${columns.map(() => '---').join('|')}|`,
  ];
  for (const row of rows) {
    const cells = columns.map(([runner, mode]) => outcome(results.get(`${runner}/${mode}/${row.fault}`)));
    lines.push(`| ${row.point} | ${row.kill ? '**SIGKILL** ' : ''}${row.how} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n') + '\n';
}
