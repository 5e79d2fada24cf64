import type { PaymentIntent, SetupIntent } from '../../client/payments.types.js';
import type { CreatedIntentListener } from '../../client/payments-created-intents.js';
import type { PaymentsRuntime } from '../../core/payments.runtime.js';
import type { WatchedIntentKind } from '../contracts/intent-watch-store.interface.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';

/** What the reconciler needs of the API client (`PaymentsService`). */
export interface ReconcileClient {
  paymentIntents: { retrieve(id: string): Promise<PaymentIntent> };
  setupIntents: { retrieve(id: string): Promise<SetupIntent> };
  onIntentCreated?(listener: CreatedIntentListener): () => void;
}

/** What one sweep did. `stopped` says why it ended before its batch did (the next sweep goes on). */
export interface ReconcileSweepResult {
  /** False when another instance holds the sweeper lease (nothing was checked here). */
  swept: boolean;
  checked: number;
  /** A terminal state no webhook had delivered: its handlers ran now. */
  reconciled: number;
  /** A terminal state whose handlers had already run (its webhook came): nothing ran. */
  settled: number;
  /** Not in a terminal state yet: checked again later. */
  pending: number;
  /** Older than `maxAgeSeconds` and still not terminal: no longer watched (logged for a person). */
  gaveUp: number;
  /** The service answered 404: no longer watched. */
  gone: number;
  stopped?: 'rate_limited' | 'unauthorized' | 'unavailable' | 'store_unavailable';
}

export const systemSleepRuntime: PaymentsRuntime = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
};

/** The event of a terminal state the reconciler found: the retrieved intent as its data, no event id. */
export function reconciledEvent(
  kind: WatchedIntentKind,
  state: string,
  intent: PaymentIntent | SetupIntent,
): PaymentEvent {
  return {
    id: '',
    webhook_id: '',
    event: `${kind}.${state}`,
    data: { [kind]: intent },
    metadata: null,
  } as PaymentEvent;
}

export function sweepLine(r: ReconcileSweepResult): string {
  const stopped = r.stopped ? `; stopped: ${r.stopped}` : '';
  return `Reconciliation sweep: checked ${r.checked}, reconciled ${r.reconciled}, already handled ${r.settled}, still pending ${r.pending}, gave up ${r.gaveUp}, gone ${r.gone}${stopped}`;
}

export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : typeof error;
}
