import type { PaymentsReconcileOptions, ResolvedPaymentsReconcileOptions } from './payments-reconcile.options.js';
import type { PaymentDeliveryListener } from './payment-delivery-listener.interface.js';
import type { PaymentsQueueOptions, ResolvedPaymentsQueueOptions } from './payments-queue.options.js';
import type { IdempotencyStore } from './idempotency-store.interface.js';
import type {
  PaymentsTransactionsOptions,
  ResolvedPaymentsTransactionsOptions,
} from './payments-transactions.options.js';
import type { WebhookVerifier } from './webhook-verifier.interface.js';

export type PaymentsProcessingOptions = 'inline' | { queue: PaymentsQueueOptions };

export interface PaymentsWebhooksOptions {
  /** Route of the receiver. Default 'payments/webhooks'. With `forRootAsync`, declare it in the static `receiver: { path }`. */
  path?: string;
  /** REQUIRED: the reference shows no signature scheme, so there is no default. */
  verifier: WebhookVerifier;
  /** Accept only deliveries whose `webhook_id` is one of these endpoint ids. */
  endpointIds?: string[];
  /** Where the one record per intent (its handlers' runs) lives. Default: a `MemoryIdempotencyStore`. */
  store?: IdempotencyStore;
  /**
   * Allow the in-memory store (the default) when `NODE_ENV=production`. Default false: boot then fails,
   * because instances of a multi-instance app would not share claims. Set it only for one instance.
   */
  allowMemoryStoreInProduction?: boolean;
  /** Opt-in observer of verified deliveries and handler runs, e.g. a `PaymentDeliveryJournal` for an operator page. Default none. */
  deliveryListener?: PaymentDeliveryListener;
  /**
   * One compact `log`-level line per verified delivery (event id, type, outcome, handlers, duration).
   * Default false: a delivery that goes well prints nothing, whatever the app's log levels (Nest's
   * default logger enables debug); failures, busy events, duplicates and refusals are logged either way.
   * See docs/logging.md.
   */
  logDeliveries?: boolean;
  /** Lease of a claim while a handler runs, in seconds. Default 300. */
  claimTtlSeconds?: number;
  /** How long a completed (event, handler) is remembered, in seconds. Default `DEFAULT_RETENTION_SECONDS` (3 days). */
  retentionSeconds?: number;
  /** Largest accepted body in bytes (413 above). Default 1048576 (1 MiB). */
  maxBodyBytes?: number;
  /**
   * Longest time the module's own body reader (Express with `bodyParser: false`, or a content type no
   * parser reads) waits for the whole body, in ms; a slower body is answered 408. Default 10000.
   */
  bodyTimeoutMs?: number;
  /** Refuse plain HTTP with 403. Default: true in production, false in sandbox. */
  requireHttps?: boolean;
  /** 'inline' (default): handlers run before the answer. `{ queue }`: BullMQ, answer once enqueued. */
  processing?: PaymentsProcessingOptions;
  /**
   * Run handlers in a PostgreSQL transaction that also records their completion (exactly-once
   * database effects; see docs/exactly-once.md). Default: none, handlers run at least once.
   */
  transactions?: PaymentsTransactionsOptions;
  /**
   * Reconcile intents whose terminal webhook never came: watch the intents created through
   * `PaymentsService`, retrieve them on a cadence, and run the handlers of a terminal state no webhook
   * delivered, once per (intent, state) across both paths. Default: on (with the defaults below) wherever
   * the app has both the API client and the receiver; `reconcile: false` turns it off, here and only here.
   * See docs/reconciliation.md.
   */
  reconcile?: PaymentsReconcileOptions | boolean;
  /**
   * Current-state handling for every handler of an intent's state events: `true` is
   * `@OnPaymentEvent(type, { current: true })` on each of them (a handler's own `current: false` opts it
   * out). Default false. See docs/current-state.md.
   */
  currentState?: boolean;
  /**
   * The app's own plug-ins (`PaymentsReceiverPlugin` objects: `forRoot` only, where the options are
   * static; `forRootAsync` declares them as `receiver.plugins`), after the built-in ones.
   */
  plugins?: readonly PaymentsReceiverPlugin[];
}

import type { PaymentsReceiverPlugin } from './payments-receiver-plugin.interface.js';
/** The receiver options after validation, with every default filled in. Frozen with the rest. */
export interface ResolvedWebhooksOptions {
  /**
   * Prefix of this instance's keys in the idempotency store: '' for the unnamed instance (keys as
   * before), '<name>:' for a named one, so instances sharing one store never share a claim.
   */
  storeKeyPrefix: string;
  /** The instance's name when it has one (not the unnamed instance): its log lines carry it. */
  instance?: string;
  path: string;
  verifier: WebhookVerifier;
  endpointIds: ReadonlySet<string> | undefined;
  store: IdempotencyStore | undefined;
  deliveryListener: PaymentDeliveryListener | undefined;
  logDeliveries: boolean;
  claimTtlSeconds: number;
  retentionSeconds: number;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  requireHttps: boolean;
  processing: 'inline' | { queue: ResolvedPaymentsQueueOptions };
  transactions: ResolvedPaymentsTransactionsOptions | undefined;
  reconcile: ResolvedPaymentsReconcileOptions | undefined;
  /** `webhooks.currentState`: every handler of an intent's state opts in to current-state handling. */
  currentState: boolean;
  /**
   * Set only when a `forRootAsync` with a static route has a factory that returns `webhooks: false`:
   * the route exists (Nest registered it before the factory ran) and answers every delivery 404.
   */
  disabled?: true;
}

/**
 * The plug-ins an asynchronously configured receiver may use, declared beside its structure
 * (`forRootAsync({ receiver: { reconcile, transactions } })`, `PaymentsWebhooksModule.registerAsync({
 * reconcile, transactions })`): a plug-in's providers are registered before the options factory runs,
 * so only the declared ones are. `transactions` left out is `false`, `reconcile` left out is `true`
 * (reconciliation is on by default; the factory's `webhooks.reconcile: false` turns it off, `reconcile:
 * false` here leaves its providers out); a factory whose options turn on a plug-in declared (or left)
 * `false` fails the boot naming the flag. `forRoot` and `register` read them from the values (the
 * plug-ins whose option is set; reconciliation unless `webhooks.reconcile` is `false`).
 */
export interface PaymentsReceiverPlugins {
  /** The transactional inbox (`webhooks.transactions`): `PaymentsInbox`. */
  transactions?: boolean;
  /** Reconciliation (`webhooks.reconcile`): `PaymentsReconciler` and its watch list. Default: true. */
  reconcile?: boolean;
  /**
   * The app's own plug-ins (`PaymentsReceiverPlugin` objects), after the built-in ones, in the order
   * their hooks run. Structure: declared here, never returned by an options factory.
   */
  plugins?: readonly PaymentsReceiverPlugin[];
}
