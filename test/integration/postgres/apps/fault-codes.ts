/**
 * The faults of the fault matrix, by code: an event id (a UUID, as the receiver requires) names its
 * cell's fault as `fa17<code, 4 hex digits>-...` (see fault-merchant.main.ts).
 */
export const FAULT_CODES = [
  'none',
  'before-claim',
  'after-claim',
  'throw',
  'sql-abort',
  'terminate',
  'timeout',
  'commit-error',
  'commit-rollback',
  'commit-lost',
  'after-commit',
  'kill-before-claim',
  'kill-after-claim',
  'kill-in-handler',
  'kill-at-commit',
  'kill-after-commit',
  'slow',
] as const;

export type FaultName = (typeof FAULT_CODES)[number];

/** A fresh event id for a delivery of `fault`'s cell. */
export function faultEventId(fault: FaultName, random: string): string {
  const code = FAULT_CODES.indexOf(fault).toString(16).padStart(4, '0');
  return `fa17${code}${random.slice(8)}`;
}

/** The fault an event id (or a key containing one) names, if any. */
export function faultOf(text: unknown): FaultName | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /fa17([0-9a-f]{4})-/.exec(text);
  return match ? FAULT_CODES[parseInt(match[1]!, 16)] : undefined;
}
