import { MAX_TIMER_MS } from './simulator-timers.js';

/**
 * Message texts of the simulator's errors, in one file. Argument problems are thrown as
 * `PaymentsInvalidArgumentError` (it names the call and the argument); the rest as `PaymentsError`.
 */

export const SIMULATOR_MESSAGES = {
  alreadyStarted: 'PaymentsSimulator is already started',
  notStarted: 'PaymentsSimulator is not started: call `await sim.start()` first',
  noApiKey: 'PaymentsSimulator: no API key registered; pass `apiKeys` or call addApiKey()',
  stoppedWhilePending: 'PaymentsSimulator stopped while deliveries were pending',
} as const;

/** Problems of arguments to the simulator and its controls. */
export const SIMULATOR_ARGUMENT_MESSAGES = {
  unknownApiKey: 'is not a key of this simulator; pass it in `apiKeys` or call addApiKey() first',
  noSuchIntent: (kind: string): string => `names no ${kind} of this simulator`,
  lateNeedsIntent:
    'is required with { late: true }: a late event is the delivery of an earlier state of an existing intent',
  nonNegativeInteger: 'must be an integer >= 0',
  positiveInteger: 'must be an integer >= 1',
  ratio: 'must be between 0 and 1',
  nonNegativeMs: 'must be a number of milliseconds >= 0',
  timerMs: `must be a number of milliseconds from 0 to ${MAX_TIMER_MS} (about 24.8 days, the longest a Node timer waits)`,
  timeoutMs: `must be a number of milliseconds from 1 to ${MAX_TIMER_MS} (about 24.8 days, the longest a Node timer waits)`,
  secretForm: "must be a non-empty secret in the scheme's form (standard-webhooks: whsec_ followed by base64)",
} as const;

/** `waitForIdle` gave up: what is still pending (counts, never bodies or secrets). */
export const stillPendingMessage = (timeoutMs: number, pending: string): string =>
  `PaymentsSimulator: deliveries still pending after ${timeoutMs} ms (${pending})`;
