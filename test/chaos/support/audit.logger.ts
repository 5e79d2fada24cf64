import { inspect } from 'node:util';
import type { LoggerService } from '@nestjs/common';
import type { LeakAudit } from './leak-audit.js';

type Level = 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';

/**
 * The Nest logger installed on every app the chaos suite creates (and as the static logger): every
 * line, at every level, with its extra arguments (stacks, contexts), is scanned by the leak audit and
 * counted, then dropped. The last few warnings and errors are kept for a failure's diagnostics.
 */
export class AuditLogger implements LoggerService {
  readonly counts: Record<Level, number> = { log: 0, error: 0, warn: 0, debug: 0, verbose: 0, fatal: 0 };
  readonly recent: string[] = [];

  constructor(
    private readonly audit: LeakAudit,
    private readonly keepRecent = 40,
  ) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.line('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.line('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.line('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.line('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.line('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.line('fatal', message, rest);
  }

  /** Lines at `error` and `fatal`. */
  get errorLines(): number {
    return this.counts.error + this.counts.fatal;
  }

  private line(level: Level, message: unknown, rest: unknown[]): void {
    const text = [message, ...rest]
      .map((part) => (typeof part === 'string' ? part : inspect(part, { depth: 12, showHidden: true })))
      .join(' ');
    this.counts[level] += 1;
    this.audit.scan(text, `nest log (${level})`);
    if (level === 'error' || level === 'fatal' || level === 'warn') {
      this.recent.push(`${level}: ${text.slice(0, 400)}`);
      if (this.recent.length > this.keepRecent) this.recent.shift();
    }
  }
}
