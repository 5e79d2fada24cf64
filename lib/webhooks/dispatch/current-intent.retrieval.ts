import type { PaymentIntent, SetupIntent } from '../../client/payments.types.js';
import { PaymentsError } from '../../errors/payments.errors.js';
import type { PaymentsRuntime } from '../../core/payments.runtime.js';
import type { EventRecord } from '../contracts/event-record.types.js';
import { MAX_CURRENT_STATE_WAIT_MS } from '../contracts/dispatch-plugin.interface.js';
import type { PaymentIntentsRetriever } from './payment-event.context.js';
import type { DispatchHooks } from './dispatch-hooks.js';

/** No turn for a retrieve within the rate's bound (the delivery answers 503 and is redelivered). */
export class RetrieveTurnUnavailableError extends PaymentsError {
  override readonly name = 'RetrieveTurnUnavailableError';

  constructor() {
    super(
      `no turn within ${MAX_CURRENT_STATE_WAIT_MS / 1000} s in webhooks.reconcile.maxRetrievesPerSecond, shared with the sweeps: raise it for this webhook rate`,
    );
  }
}

/** An intent as a retrieve answered it. */
export type RetrievedIntent = PaymentIntent | SetupIntent;

/**
 * The retrieves of current-state handling, single-flight: one GET per (instance, intent) at a time,
 * shared by every opted-in handler and every concurrent delivery of that intent, keyed by the intent's
 * record key (`[<instance>:]i:<id>`) and forgotten as soon as it settles (the next delivery asks
 * again: nothing is cached). Each GET waits for its turn in reconciliation's retrieve rate when that
 * plug-in is on (`retrieveDelayMs`), and its answer is told to the plug-ins (`afterRetrieve`: the watch
 * list settles on it).
 */
export class CurrentIntentRetrieval {
  private readonly inFlight = new Map<string, Promise<RetrievedIntent>>();

  constructor(
    private readonly client: PaymentIntentsRetriever,
    private readonly runtime: Pick<PaymentsRuntime, 'now' | 'sleep'>,
    private readonly hooks: DispatchHooks,
  ) {}

  /** The intent `record` names (an intent's record: `kind` and `intentId` set), from the GET in flight if any. */
  retrieve(record: EventRecord): Promise<RetrievedIntent> {
    const running = this.inFlight.get(record.key);
    if (running !== undefined) return running;
    // `finally` is attached before any caller's `then`: the entry is gone before a caller goes on.
    const started = this.get(record).finally(() => this.inFlight.delete(record.key));
    this.inFlight.set(record.key, started);
    return started;
  }

  private async get(record: EventRecord): Promise<RetrievedIntent> {
    const delay = this.hooks.retrieveDelayMs(this.runtime.now());
    if (delay === Number.POSITIVE_INFINITY) throw new RetrieveTurnUnavailableError();
    if (delay > 0) await this.runtime.sleep(delay);
    const id = record.intentId!;
    let intent: RetrievedIntent;
    try {
      intent =
        record.kind === 'setup_intent'
          ? await this.client.setupIntents.retrieve(id)
          : await this.client.paymentIntents.retrieve(id);
    } catch (error) {
      this.hooks.afterRetrieve(record, { error });
      throw error;
    }
    this.hooks.afterRetrieve(record, { state: String((intent as { state?: unknown }).state) });
    return intent;
  }
}
