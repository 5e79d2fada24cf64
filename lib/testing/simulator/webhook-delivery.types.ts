import type { SimulatorControls } from './simulator-controls.js';
import type { SimulatedWebhookAttempt, SimulatedWebhookRequest } from './payments-simulator.options.js';

/** The endpoint a delivery goes to. */
export interface DeliveryTarget {
  id: string;
  url: string;
  secret: string;
  account: string;
}

/** One event of a batch and the endpoints subscribed to it. */
export interface DeliveryBatchItem {
  eventId: string;
  event: string;
  /** Builds the body for one endpoint (its `webhook_id` differs); serialised once, sent as is on every attempt. */
  bodyFor(target: DeliveryTarget): string;
  targets: DeliveryTarget[];
}

export interface DeliveryEngineDeps {
  /** Signs one attempt: headers for this body, secret, message id and unix-seconds timestamp. */
  sign(rawBody: string, secret: string, msgId: string, timestampSeconds: number): Record<string, string>;
  retrySchedule: readonly number[];
  timeoutMs: number;
  now(): number;
  random(): number;
  controls: SimulatorControls;
}

export interface RequestState {
  record: SimulatedWebhookRequest;
  attempts: SimulatedWebhookAttempt[];
  target: DeliveryTarget;
  /** Attempts since the request was created or last resent (the retry schedule restarts on resend). */
  seriesAttempts: number;
  /** Timer of the next attempt (a retry, or a first attempt delayed by `delayDeliveries`). */
  retryTimer: NodeJS.Timeout | undefined;
  /** Settles when the first attempt has finished, whoever started it (the unit, or a resend). */
  firstAttemptDone: Promise<void>;
  markFirstAttemptDone: () => void;
}

/** Requests started one after the other (copies of a sequential duplicate). */
export type Unit = RequestState[];

/** The statuses of a request that is not finished yet (`idle` waits until none is). */
export const PENDING_STATUSES: ReadonlySet<SimulatedWebhookRequest['status']> = new Set([
  'held',
  'queued',
  'scheduled',
  'delivering',
]);

/** `2 scheduled, 1 delivering`: what is still pending, for the message of a `waitForIdle` that timed out. */
export function pendingSummary(requests: Iterable<RequestState>): string {
  const counts: Record<string, number> = {};
  for (const state of requests) {
    if (PENDING_STATUSES.has(state.record.status)) counts[state.record.status] = (counts[state.record.status] ?? 0) + 1;
  }
  return Object.entries(counts)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
}
