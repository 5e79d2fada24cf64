import { inspect } from 'node:util';
import { Logger, type LoggerService } from '@nestjs/common';

/** Every way an error is commonly rendered: message, stack, JSON, deep inspect with hidden fields. */
export function renderings(value: unknown): string[] {
  const out = [String(value), JSON.stringify(value) ?? '', inspect(value, { depth: 12, showHidden: true })];
  if (value instanceof Error) out.push(value.stack ?? '', value.message);
  return out;
}

/** Routes every Nest log line into an array, for the duration of a suite. */
export function captureLogs(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const push = (...args: unknown[]): void => {
    lines.push(args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 12, showHidden: true }))).join(' '));
  };
  const collector: LoggerService = { log: push, error: push, warn: push, debug: push, verbose: push, fatal: push };
  Logger.overrideLogger(collector);
  return { lines, restore: () => Logger.overrideLogger(new Logger()) };
}
