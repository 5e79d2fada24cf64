import { AuditLogger } from './audit.logger.js';
import { leakAudit } from './leak-audit.js';
import { ReliabilityReport } from './reliability.report.js';

/** Column names of the table, in order: every part must report, or the run fails. */
export const PARTS = {
  fuzzExpress: 'fuzz:express',
  fuzzFastify: 'fuzz:fastify',
  chaosInline: 'chaos:inline+memory',
  chaosQueued: 'chaos:queued+redis',
  storm: '429 storm',
  hardening: 'hardening',
  inbox: 'pg inbox, 3 proc, SIGKILL',
  inboxRedis: 'redis store, 3 proc, SIGKILL',
  reconcileInbox: 'reconcile, pg inbox, SIGKILL',
  reconcileRedis: 'reconcile, redis, SIGKILL',
  reconcileRedisInbox: 'reconcile, redis claims + pg inbox, SIGKILL',
  audit: 'leak audit',
} as const;

/** The one report of the run (the suite is one spec file, so every part shares these instances). */
export const report = new ReliabilityReport(Object.values(PARTS));

/** The Nest logger of every app the suite creates, and the static logger: scans each line for secrets. */
export const auditLogger = new AuditLogger(leakAudit);

export { leakAudit };

/** One line on stdout as a part ends, so a long run shows where it is (Jest prints results only at the end). */
export function progress(message: string): void {
  process.stdout.write(`[chaos ${new Date().toISOString()}] ${message}\n`);
}

/** Counts the uncaught exceptions and unhandled rejections of the process while installed. */
export class CrashWatch {
  uncaught = 0;
  readonly #onError = (error: unknown) => {
    this.uncaught += 1;
    leakAudit.scanError(error, 'uncaught error');
    auditLogger.error(`uncaught: ${error instanceof Error ? error.stack : String(error)}`);
  };

  install(): this {
    process.on('uncaughtException', this.#onError);
    process.on('unhandledRejection', this.#onError);
    return this;
  }

  uninstall(): void {
    process.off('uncaughtException', this.#onError);
    process.off('unhandledRejection', this.#onError);
  }
}
