import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A row of the table: `bad` rows must be zero for the run to pass; the others describe the run. */
export interface FigureDefinition {
  key: string;
  label: string;
  bad: boolean;
  /** How to print a value (default: the integer). */
  unit?: 'MB' | 's';
}

/** Every row, in print order. The first six are the issue's table; the other bad rows guard the same promises. */
export const FIGURES: readonly FigureDefinition[] = [
  { key: 'casesRun', label: 'cases run', bad: false },
  { key: 'handlerRunsWithoutValidSignature', label: 'handler runs without a valid signature', bad: true },
  { key: 'lostEvents', label: 'lost events', bad: true },
  { key: 'doubleRuns', label: 'double runs', bad: true },
  { key: 'leaks', label: 'leaks', bad: true },
  { key: 'fiveXxOutsideTable', label: '5xx outside the table', bad: true },
  { key: 'wrongAnswers', label: 'wrong answers or end states', bad: true },
  { key: 'crashes', label: 'crashes (uncaught errors, dead server)', bad: true },
  { key: 'heapOverBound', label: 'heap growth over bound', bad: true },
  { key: 'callsOverMaxRetries', label: 'calls over maxRetries', bad: true },
  { key: 'clientErrorLines', label: 'error log lines caused by clients (aborted or slow bodies)', bad: true },
  { key: 'waitsIgnoringRetryAfter', label: 'waits not honouring Retry-After', bad: true },
  { key: 'events', label: 'events emitted / valid events sent', bad: false },
  { key: 'deliveries', label: 'HTTP deliveries / requests', bad: false },
  { key: 'duplicateDeliveries', label: 'duplicate deliveries', bad: false },
  { key: 'answers409', label: '409 answers', bad: false },
  { key: 'answers500', label: '500 answers (injected handler failures)', bad: false },
  { key: 'answers503', label: '503 answers (store outages)', bad: false },
  { key: 'injectedFailures', label: 'injected handler failures', bad: false },
  { key: 'storeOutages', label: 'store outage windows', bad: false },
  { key: 'storeCallsRefused', label: 'store calls refused by outages', bad: false },
  { key: 'rerunsAfterLostCompletion', label: 'reruns after a lost completion (at-least-once window)', bad: false },
  { key: 'processKills', label: 'merchant processes SIGKILLed (and restarted)', bad: false },
  { key: 'deliveriesCutByKills', label: 'delivery attempts cut by a kill (no answer, 502/503)', bad: false },
  { key: 'duplicateLedgerRows', label: 'duplicate ledger rows (non-transactional store)', bad: false },
  { key: 'effectsAbsorbed', label: 'repeated shipments absorbed by conditional updates', bad: false },
  { key: 'unfulfilledPaidOrders', label: 'paid orders never fulfilled (reconciliation)', bad: true },
  { key: 'effectsForCancelledOrders', label: 'effects for cancelled orders (reconciliation)', bad: true },
  { key: 'ordersPaid', label: 'orders paid / cancelled (reconciliation)', bad: false },
  { key: 'webhooksDropped', label: 'webhooks dropped for good (reconciliation)', bad: false },
  { key: 'reconciledRows', label: 'handler runs by the reconciler', bad: false },
  { key: 'rateLimited', label: '429 answers', bad: false },
  { key: 'rateLimitErrors', label: 'calls failed with PaymentsRateLimitError', bad: false },
  { key: 'heapGrowthMb', label: 'heap growth after warm-up', bad: false, unit: 'MB' },
  { key: 'needles', label: 'secret forms searched for', bad: false },
  { key: 'logLines', label: 'log lines and texts scanned for secrets', bad: false },
  { key: 'errorsRendered', label: 'errors rendered and scanned', bad: false },
  { key: 'durationS', label: 'duration', bad: false, unit: 's' },
];

export type Figures = Partial<Record<string, number>>;

interface PartEntry {
  name: string;
  figures: Figures;
}

/**
 * Collects the figures of every part of the chaos suite and prints them as one table at the end. A
 * part that never reported (it crashed, or was filtered out) is listed as missing, which fails the run.
 */
export class ReliabilityReport {
  readonly #parts: PartEntry[] = [];
  readonly #expected: string[];

  constructor(expectedParts: readonly string[]) {
    this.#expected = [...expectedParts];
  }

  /** Adds to (or creates) the figures of `part`. */
  record(part: string, figures: Figures): void {
    let entry = this.#parts.find((p) => p.name === part);
    if (!entry) {
      entry = { name: part, figures: {} };
      this.#parts.push(entry);
    }
    for (const [key, value] of Object.entries(figures)) {
      if (value === undefined) continue;
      entry.figures[key] = (entry.figures[key] ?? 0) + value;
    }
  }

  /** Sum of one figure over every part. */
  sum(key: string): number {
    return this.#parts.reduce((total, part) => total + (part.figures[key] ?? 0), 0);
  }

  /** Parts that were expected but never reported. */
  missingParts(): string[] {
    return this.#expected.filter((name) => !this.#parts.some((p) => p.name === name));
  }

  /** Sum of every bad figure of every part. */
  badTotal(): number {
    let total = 0;
    for (const part of this.#parts) for (const def of FIGURES) if (def.bad) total += part.figures[def.key] ?? 0;
    return total;
  }

  /** The bad figures that are not zero, as `part: label = n`. */
  badLines(): string[] {
    const lines: string[] = [];
    for (const part of this.#parts) {
      for (const def of FIGURES) {
        const value = part.figures[def.key] ?? 0;
        if (def.bad && value !== 0) lines.push(`${part.name}: ${def.label} = ${value}`);
      }
    }
    return lines;
  }

  /** The table, as text. */
  render(header: string): string {
    const parts = this.#parts;
    const columns = [...parts.map((p) => p.name), 'total'];
    const cell = (def: FigureDefinition, value: number | undefined): string => {
      if (value === undefined) return '-';
      if (def.unit === 'MB') return `${value.toFixed(1)} MB`;
      if (def.unit === 's') return `${value.toFixed(1)} s`;
      return String(value);
    };
    const rows = FIGURES.filter((def) => parts.some((p) => p.figures[def.key] !== undefined)).map((def) => {
      const values = parts.map((p) => p.figures[def.key]);
      const present = values.filter((v): v is number => v !== undefined);
      const total =
        def.unit === 'MB' ? (present.length ? Math.max(...present) : undefined) : present.reduce((a, b) => a + b, 0);
      return [`${def.bad ? '!' : ' '} ${def.label}`, ...values.map((v) => cell(def, v)), cell(def, total)];
    });
    const head = ['  figure', ...columns];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) =>
      cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ');
    const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
    const missing = this.missingParts();
    return [
      header,
      line(head),
      rule,
      ...rows.map(line),
      rule,
      `'!' rows must be 0 (heap growth over bound counts adapters above it; total of a MB row is its maximum).`,
      missing.length ? `MISSING PARTS (did not report): ${missing.join(', ')}` : 'every part reported.',
      `bad figures: ${this.badTotal()}${missing.length ? ` + ${missing.length} missing part(s)` : ''}`,
    ].join('\n');
  }

  /** Writes the figures as JSON under the OS temp dir (`nestjs-payments-reliability/latest.json` and a dated copy). */
  write(meta: Record<string, unknown>): string {
    const dir = join(tmpdir(), 'nestjs-payments-reliability');
    mkdirSync(dir, { recursive: true });
    const body = JSON.stringify(
      { ...meta, parts: this.#parts, missingParts: this.missingParts(), badTotal: this.badTotal() },
      null,
      2,
    );
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    writeFileSync(join(dir, `run-${stamp}.json`), body);
    const latest = join(dir, 'latest.json');
    writeFileSync(latest, body);
    return latest;
  }
}
