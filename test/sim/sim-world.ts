import 'reflect-metadata';
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  PaymentsApiError,
  PaymentsConnectionError,
  PaymentsRateLimitError,
  type PaymentEvent,
  type PaymentEventContext,
  type PaymentIntent,
} from '../../lib/index.js';
import type { PaymentsRuntime } from '../../lib/testing/index.js';
import { PaymentEventsRegistry, PaymentsReconciler } from '../../lib/webhooks/index.js';
import type { PaymentEventPattern, RunCompletion } from '../../lib/webhooks/index.js';
import type {
  DispatchMeta,
  DispatchResult,
  PaymentEventsDispatch,
} from '../../lib/webhooks/contracts/dispatch-result.types.js';
import { PaymentEventsDispatcher } from '../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { DISPATCH_OUTCOME_STATUS } from '../../lib/webhooks/dispatch/inline-payment-events.processor.js';
import { validateWebhooksOptions } from '../../lib/webhooks/payments-webhooks.validator.js';
import type { PaymentsDispatchPlugin } from '../../lib/webhooks/contracts/dispatch-plugin.interface.js';
import { dispatchPluginsOf, intentWatchStoreFor } from '../../lib/webhooks/payments-webhooks.plugins.js';
import type { CreatedIntentListener } from '../../lib/client/payments-created-intents.js';
import { standardWebhooksVerifier } from '../../lib/index.js';
import { SimEngine, SimIdempotencyStore } from './sim-engine.js';
import { ScriptedInboxDatabase } from '../model/scripted-inbox.database.js';
import { PaymentsInbox } from '../../lib/webhooks/transactional/payments-inbox.js';
import { SimRandom } from './sim-random.js';
import { reconciledEvent } from '../../lib/webhooks/records/retrieved-state.event.js';

/*
 * The world of the whole-system simulation: a payment service with one account per module instance,
 * processes that each run every instance (a release: reconciliation on or off, its terminal states,
 * current-state handling for every handler on or off), one shared engine, and the invariants, checked
 * as effects happen and at quiescence. Current-state handling: handlers opted in by their own
 * `current`, or by the release; each opted-in run is checked against the service's truth at the
 * retrieve it ran on (its state then, its place in the intent's history) and against the other
 * opted-in runs of its intent (never back in the history, never two states at once).
 */

/** The module instances of every process: the unnamed one and a named one, sharing the engine. */
export const INSTANCES = ['default', 'eu'] as const;
export type InstanceName = (typeof INSTANCES)[number];

const RECONCILE = {
  afterSeconds: 3,
  everySeconds: 2,
  cadence: [
    { untilAgeSeconds: 30, everySeconds: 3 },
    { untilAgeSeconds: Number.POSITIVE_INFINITY, everySeconds: 10 },
  ],
  maxAgeSeconds: 150,
  batchSize: 4,
  maxRetrievesPerSecond: 4,
  // Up to 4 retrieves in flight (the default, one second's worth): checks of one sweep overlap.
};

/**
 * The releases a rolling deploy moves between: reconciliation off or on (and how), and current-state
 * handling for every handler (`webhooks.currentState`) on or off, so a deploy switches either mode.
 */
export const RELEASES: readonly Release[] = [
  { label: 'reconcile off', reconcile: undefined, currentState: false },
  { label: 'reconcile on', reconcile: RECONCILE, currentState: false },
  {
    label: 'reconcile on, succeeded only',
    reconcile: { ...RECONCILE, terminalStates: { payment_intent: ['succeeded'] } },
    currentState: false,
  },
  {
    label: 'reconcile on, one retrieve at a time',
    reconcile: { ...RECONCILE, maxConcurrentRetrieves: 1 },
    currentState: false,
  },
  {
    label: 'reconcile on, errored_sale terminal',
    reconcile: { ...RECONCILE, terminalStates: { payment_intent: ['succeeded', 'cancelled', 'errored_sale'] } },
    currentState: false,
  },
  { label: 'reconcile off, current state on', reconcile: undefined, currentState: true },
  { label: 'reconcile on, current state on', reconcile: RECONCILE, currentState: true },
  {
    label: 'reconcile on, errored_sale terminal, current state on',
    reconcile: { ...RECONCILE, terminalStates: { payment_intent: ['succeeded', 'cancelled', 'errored_sale'] } },
    currentState: true,
  },
];
export interface Release {
  readonly label: string;
  readonly reconcile: Record<string, unknown> | undefined;
  /** `webhooks.currentState`: every handler without its own `current` opts in. */
  readonly currentState: boolean;
}
/** The releases every process runs at quiescence (the default terminal states), current state off and on. */
const QUIET_RELEASES = [RELEASES[1]!, RELEASES[6]!];

/**
 * Handlers of every instance: the terminal states, and one of every state (some recur). `current`: the
 * handler's own `@OnPaymentEvent(type, { current })`; without it, the release's `webhooks.currentState`.
 */
const HANDLERS: ReadonlyArray<{ id: string; patterns: string[]; transactional?: true; current?: boolean }> = [
  { id: 'Shop.paid', patterns: ['payment_intent.succeeded'] },
  { id: 'Shop.released', patterns: ['payment_intent.cancelled'] },
  { id: 'Audit.any', patterns: ['payment_intent.*'] },
  // In the transactional inbox: its effect commits with its record, so it runs exactly once, no window.
  // It follows the release's current-state mode (the inbox's context once dropped ctx.intent: seed 2).
  {
    id: 'Ledger.paid',
    patterns: ['payment_intent.succeeded'],
    transactional: true,
  },
  // Current-state handling, opted in whatever the release: fulfilment on capture and its outcomes,
  // and a status page that follows every state (recurring ones too: the states it shows never go back).
  {
    id: 'Fulfil.current',
    patterns: ['payment_intent.requires_capture', 'payment_intent.succeeded', 'payment_intent.errored_capture'],
    current: true,
  },
  { id: 'Status.current', patterns: ['payment_intent.*'], current: true },
  // Opted out even where the release opts every handler in.
  { id: 'Mail.raw', patterns: ['payment_intent.requires_capture', 'payment_intent.cancelled'], current: false },
];

/** States an intent moves through: some recur, the last one is where it stays. */
const RECURRING = ['requires_payment_method', 'requires_confirmation'];
/** After `requires_capture` (recurring too): its outcomes. */
const CAPTURED = ['succeeded', 'errored_capture', 'cancelled'];
const FINAL = ['succeeded', 'cancelled', 'errored_sale', 'errored_capture'];
/** The terminal states of the release every process runs at quiescence (the defaults). */
const FINAL_TERMINAL = ['succeeded', 'cancelled'];

interface SimIntent {
  instance: InstanceName;
  id: string;
  state: string;
  /** Retrieves of it never answer (a timeout each time). */
  stuck: boolean;
  createdBy: number;
  /** When the process created it, the release's reconciliation was on (it should be watched). */
  watchWanted: boolean;
  /** Every state it has been in, in order (the first: `requires_payment_method`). */
  history: string[];
}

/** What the service answered a retrieve with: the intent's true state then, and its place in the history. */
interface RetrieveTruth {
  state: string;
  index: number;
  at: number;
}

/** An opted-in handler running now (from its call until it returns or throws). */
interface CurrentRun {
  key: string;
  proc: SimProcess;
  state: string;
  handler: string;
  event: string;
  trace: DispatchTrace | undefined;
}

interface SimEvent {
  instance: InstanceName;
  id: string;
  intent: string;
  state: string;
  /** The service never delivers it (what reconciliation is for). */
  lost: boolean;
  delivered: boolean;
}

/** A delivery or reconciliation in flight: the effects its handlers wrote before it answered. */
interface DispatchTrace {
  proc: SimProcess;
  /** A webhook delivery's dispatch (a `reconciliation` source within it: a superseded delivery's current state). */
  delivery?: boolean;
  effects: string[];
  /** Its process stalled past the lease while it ran: what it writes may be written again. */
  lapsed?: boolean;
  /** The runs it claimed (heard): each must be completed or released before it answers. */
  tokens: Array<{ token: string; slot: string }>;
  /** The event ids the app's own plug-in was told of (`afterDispatch`) within this dispatch. */
  told?: string[];
}

export interface Violation {
  kind: string;
  detail: string;
  /** An intent id, to cut the trace down to what concerns it. */
  intent?: string;
}

class SimProcess {
  alive = true;
  /** The process's connection to the engine (its `alive`), by which a stall delays its calls. */
  connection: () => boolean = () => this.alive;
  readonly dispatchers = new Map<InstanceName, PaymentEventsDispatcher>();
  readonly reconcilers = new Map<InstanceName, PaymentsReconciler>();
  readonly createdListeners = new Map<InstanceName, CreatedIntentListener>();
  constructor(
    readonly id: number,
    readonly release: Release,
  ) {}
}

export interface SimSettings {
  processes: number;
  intentsPerInstance: number;
  chaosMs: number;
  quietMs: number;
  storeFaults: number;
  crashes: number;
  deploys: number;
  /** Pauses of a process past the claims' lease (its calls to the engine land when it resumes). */
  stalls: number;
}

export const DEFAULT_SETTINGS: SimSettings = {
  processes: 3,
  intentsPerInstance: 8,
  chaosMs: 90_000,
  quietMs: 260_000,
  storeFaults: 0.03,
  crashes: 3,
  deploys: 2,
  stalls: 3,
};

const DISPATCHING = new AsyncLocalStorage<DispatchTrace>();

export class SimWorld {
  readonly random: SimRandom;
  readonly engine: SimEngine;
  readonly trace: string[] = [];
  readonly violations: Violation[] = [];
  readonly intents = new Map<string, SimIntent>();
  readonly events: SimEvent[] = [];
  readonly processes: SimProcess[] = [];
  /** PostgreSQL as the transactional inbox uses it (one database for every process). */
  readonly inboxDb = new ScriptedInboxDatabase();
  /** Which dispatch a store call comes from (the claims it was granted are its own). */
  /**
   * One for every world of the process: Node keeps each AsyncLocalStorage that ever ran on a list that
   * every new promise walks, so one per seed made each seed slower than the last (300 seeds: 55 s, 59 %
   * of it in async_hooks' _propagate).
   */
  private readonly dispatching = DISPATCHING;
  /** Effects by `instance|occurrence|handler`: a terminal state's occurrence is `intent:state`, another state's the event id. */
  readonly effects = new Map<string, number>();
  /** Effects that may legitimately run again: written, then the process died or the store lost the completion. */
  readonly excused = new Map<string, number>();
  /** Event id seen by handlers -> the occurrence it stood for (one id, one occurrence). */
  readonly eventIds = new Map<string, string>();
  /** The service's answers to retrieves: the intent object it returned -> the truth when it answered. */
  private readonly retrieves = new WeakMap<object, RetrieveTruth>();
  /** Per `instance|intent`: the furthest place in its history an opted-in handler has run on. */
  private readonly seenIndex = new Map<string, number>();
  /** Per `instance|intent`: the opted-in handlers running now. */
  private readonly running = new Map<string, Set<CurrentRun>>();
  /** Per `event id|handler`: a 200 answer said this opted-in handler did not run (`superseded`, `gone`). */
  private readonly notRun = new Set<string>();
  /** What current-state handling did in this seed (that the checks had something to check). */
  readonly current = { runs: 0, superseded: 0, modes: new Set<boolean>() };
  /**
   * The app's own plug-ins in every process (issue 41): one whose after-hooks throw for about one event
   * in five, then one that records what it is told. Invariant: every dispatch that answers told the
   * recorder of its event, whatever the thrower did, and no outcome changed (the other invariants).
   */
  readonly plugins = { told: 0, thrown: 0, reconciles: 0 };
  /** The terminal states every release in this run has used (to know which states are once-only). */
  private readonly inFlight = new WeakMap<object, DispatchTrace>();
  private readonly openTraces = new Set<DispatchTrace>();
  private nextProcess = 0;
  /** The release being deployed: what a restarted process runs. */
  private release: Release = RELEASES[1]!;
  private readonly runtime: PaymentsRuntime;

  constructor(
    readonly seed: number,
    readonly settings: SimSettings = DEFAULT_SETTINGS,
  ) {
    this.random = new SimRandom(seed);
    this.engine = new SimEngine(this.random);
    this.engine.broke = (detail) =>
      this.violate({ kind: 'token broken', detail, intent: detail.match(/i:([0-9a-f-]{36})/)?.[1] });
    this.runtime = {
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      random: () => this.random.next(),
    };
  }

  log(line: string): void {
    this.trace.push(`${new Date(Date.now()).toISOString().slice(11, 23)} ${line}`);
  }

  violate(violation: Violation): void {
    this.violations.push(violation);
    this.log(`VIOLATION ${violation.kind}: ${violation.detail}`);
  }

  // --- processes -----------------------------------------------------------------------------------

  start(release: Release): SimProcess {
    const proc = new SimProcess(this.nextProcess++, release);
    this.processes.push(proc);
    this.current.modes.add(release.currentState);
    this.log(`process ${proc.id} starts (${release.label})`);
    const alive = proc.connection;
    for (const instance of INSTANCES) {
      const webhooks = validateWebhooksOptions(
        {
          verifier: standardWebhooksVerifier({ secrets: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
          store: new SimIdempotencyStore(
            this.engine,
            alive,
            (key, completion) => this.completionLost(instance, key, completion),
            proc.id,
            () => {
              const trace = this.dispatching.getStore();
              return trace && ((token, slot) => void trace.tokens.push({ token, slot }));
            },
          ),
          claimTtlSeconds: 20,
          transactions: {
            runner: this.inboxDb.runner(
              { step: (kind, _about, _faultable, apply) => this.engine.call(alive, kind, apply), ghosts: [] },
              String(proc.id),
            ),
            createTable: false,
          },
          // Reconciliation is on by default now: the release without it says so (`false`, the one switch).
          reconcile: release.reconcile ?? false,
          currentState: release.currentState,
        },
        'sandbox',
        instance,
      );
      if (webhooks === false) throw new Error('unreachable');
      const registry = new PaymentEventsRegistry();
      for (const handler of HANDLERS) {
        registry.register({
          id: handler.id,
          patterns: handler.patterns as PaymentEventPattern[],
          options:
            handler.transactional || handler.current !== undefined
              ? {
                  ...(handler.transactional ? { transactional: true } : {}),
                  ...(handler.current !== undefined ? { current: handler.current } : {}),
                }
              : undefined,
          invoke: (event: PaymentEvent, ctx: PaymentEventContext) =>
            this.runHandler(proc, instance, handler.id, event, ctx),
        });
      }
      const client = this.client(proc, instance, 'sweeper');
      const watchList = webhooks.reconcile
        ? intentWatchStoreFor(webhooks.reconcile, webhooks.store!, this.runtime, webhooks.instance)
        : undefined;
      // The built-in plug-ins' hooks, then the app's own two (see `plugins`), as Nest orders them.
      const plugins = [
        ...dispatchPluginsOf(webhooks, { watchList, inbox: new PaymentsInbox(webhooks, this.runtime, registry) }),
        ...this.ownPlugins(),
      ];
      const dispatcher = new PaymentEventsDispatcher(
        registry,
        webhooks.store!,
        webhooks,
        this.runtime,
        // The same account; its retrieves are current-state handling's, not the sweeper's.
        this.client(proc, instance, 'current'),
        undefined,
        plugins,
      );
      proc.dispatchers.set(instance, dispatcher);
      if (watchList) {
        const reconciler = new PaymentsReconciler(
          webhooks,
          watchList,
          this.traced(proc, dispatcher),
          client,
          this.runtime,
          undefined,
          plugins,
        );
        reconciler.onApplicationBootstrap();
        proc.reconcilers.set(instance, reconciler);
      }
    }
    return proc;
  }

  /**
   * The app's own plug-ins (`PaymentsDispatchPlugin` hooks, as a `PaymentsReceiverPlugin`'s factory
   * builds them): a thrower, deterministic per event id (it draws nothing from the seed's random source),
   * then a recorder.
   */
  private ownPlugins(): PaymentsDispatchPlugin[] {
    const throwsFor = (id: string): boolean => id.charCodeAt(id.length - 1) % 5 === 0;
    const thrower: PaymentsDispatchPlugin = {
      name: 'sim-thrower',
      afterDispatch: ({ event }) => {
        if (!throwsFor(event.id)) return;
        this.plugins.thrown++;
        throw new Error('the sim plug-in throws after a dispatch');
      },
      onReconcile: (record) => {
        if (!throwsFor(record.intentId)) return;
        this.plugins.thrown++;
        throw new Error('the sim plug-in throws after a reconciliation');
      },
    };
    const recorder: PaymentsDispatchPlugin = {
      name: 'sim-recorder',
      afterDispatch: ({ event }) => {
        this.plugins.told++;
        this.dispatching.getStore()?.told?.push(event.id);
      },
      onReconcile: () => void this.plugins.reconciles++,
    };
    return [thrower, recorder];
  }

  crash(proc: SimProcess): void {
    if (!proc.alive) return;
    proc.alive = false;
    // The database rolls back what its connections had open.
    this.inboxDb.abortOpen(String(proc.id));
    this.log(`process ${proc.id} crashes`);
    // What it wrote and had not recorded as complete may run again: the at-least-once window.
    for (const trace of this.openTraces) {
      if (trace.proc !== proc) continue;
      for (const effect of trace.effects) this.excuse(effect);
      this.openTraces.delete(trace);
    }
    for (const reconciler of proc.reconcilers.values()) void reconciler.onApplicationShutdown();
    // Its handlers never return: they are no longer running anywhere.
    for (const runs of this.running.values()) for (const run of runs) if (run.proc === proc) runs.delete(run);
  }

  /**
   * The process pauses (a long GC, a VM migration) or loses the engine for `ms`, longer than the claims'
   * lease: its calls land when it resumes, and another process may have taken its lapsed claims. What
   * its runs in flight wrote may be written again: the documented window of a lapsed lease.
   */
  stall(proc: SimProcess, ms: number): void {
    this.log(`process ${proc.id} stalls for ${ms} ms`);
    this.engine.stalledUntil.set(proc.connection, Date.now() + ms);
    for (const trace of this.openTraces) {
      if (trace.proc !== proc) continue;
      trace.lapsed = true;
      for (const effect of trace.effects) this.excuse(effect);
    }
  }

  /** Intent creations that found no process alive (each counted once; see `createIntent`). */
  createsWithoutProcess = 0;

  alive(): SimProcess[] {
    return this.processes.filter((proc) => proc.alive);
  }

  // --- the service ---------------------------------------------------------------------------------

  /**
   * What the module's client does for the reconciler (`sweeper`: each GET checked against the sweeper
   * lease) and for current-state handling (`current`): GETs this account's intent.
   */
  private client(proc: SimProcess, instance: InstanceName, caller: 'sweeper' | 'current') {
    const retrieve = (id: string): Promise<PaymentIntent> => {
      if (!proc.alive) return new Promise(() => undefined);
      const intent = this.intents.get(id.toLowerCase());
      const path = `/payment_intents/${id}`;
      if (caller === 'sweeper') this.onRetrieve(proc, instance, id);
      const draw = this.random.next();
      const delay = this.random.int(5, 400);
      return new Promise<PaymentIntent>((resolve, reject) => {
        const answer = () => {
          if (!proc.alive) return;
          if (intent?.stuck) return reject(new PaymentsConnectionError('GET', path, 'ETIMEDOUT'));
          if (draw < 0.03) return reject(new PaymentsRateLimitError({ method: 'GET', path, body: {}, attempts: 3 }));
          if (draw < 0.06) return reject(new PaymentsApiError({ status: 502, method: 'GET', path, body: {} }));
          if (draw < 0.08) return reject(new PaymentsConnectionError('GET', path, 'ECONNRESET'));
          // Another account's intent is unknown to this key.
          if (!intent || intent.instance !== instance)
            return reject(new PaymentsApiError({ status: 404, method: 'GET', path, body: {} }));
          const answered = { id: intent.id, state: intent.state, amount: 1000 } as PaymentIntent;
          this.retrieves.set(answered, { state: intent.state, index: intent.history.length - 1, at: Date.now() });
          if (caller === 'current') {
            this.log(
              `${instance}: process ${proc.id} retrieve of ${intent.id} answered ${intent.state} (#${intent.history.length - 1})`,
            );
            // Now and then the process pauses just after a current-state retrieve answers (a long GC):
            // what it does next with that answer lands after the claims' lease (it found a superseded
            // delivery's current state run on that older answer: seed 584, fixed).
            if (this.random.chance(0.03)) this.stall(proc, this.random.int(21_000, 40_000));
          }
          resolve(answered);
        };
        setTimeout(answer, intent?.stuck ? 10_000 : delay);
      });
    };
    return {
      paymentIntents: { retrieve },
      setupIntents: { retrieve: () => Promise.reject(new Error('no setup intents in the simulation')) },
      onIntentCreated: (listener: CreatedIntentListener) => {
        proc.createdListeners.set(instance, listener);
        return () => proc.createdListeners.delete(instance);
      },
    };
  }

  /** A process creates an intent through its client: the release's reconciler watches it. */
  createIntent(instance: InstanceName): void {
    const proc = this.random.pick(this.alive());
    if (!proc) {
      // Every process down at that moment (crashes and a deploy's restart together): no shop to create it.
      this.createsWithoutProcess++;
      this.log(`${instance}: no process alive to create an intent`);
      return;
    }
    const id = this.random.uuid();
    const intent: SimIntent = {
      instance,
      id,
      state: 'requires_payment_method',
      stuck: this.random.chance(0.1),
      createdBy: proc.id,
      watchWanted: proc.release.reconcile !== undefined,
      history: ['requires_payment_method'],
    };
    this.intents.set(id, intent);
    this.log(`${instance}: process ${proc.id} creates ${id}${intent.stuck ? ' (retrieves never answer)' : ''}`);
    void proc.createdListeners.get(instance)?.('payment_intent', { id }, {});
  }

  /** The intent moves to `state`, and the service emits that state's event (perhaps never delivered). */
  transition(id: string, state: string): void {
    const intent = this.intents.get(id)!;
    intent.state = state;
    intent.history.push(state);
    const event: SimEvent = {
      instance: intent.instance,
      id: this.random.uuid(),
      intent: id,
      state,
      lost: this.random.chance(0.4),
      delivered: false,
    };
    this.events.push(event);
    this.log(`${intent.instance}: ${id} -> ${state}, event ${event.id}${event.lost ? ' (lost)' : ''}`);
    if (!event.lost) this.deliver(event, 1, this.random.int(0, 3000));
  }

  /** The service's delivery of `event`, retried until answered 2xx; sometimes sent twice at once. */
  deliver(event: SimEvent, attempt: number, afterMs: number): void {
    setTimeout(() => {
      const copies = this.random.chance(0.15) ? 2 : 1;
      for (let copy = 0; copy < copies; copy++) void this.attempt(event, attempt);
    }, afterMs);
  }

  private async attempt(event: SimEvent, attempt: number): Promise<void> {
    const proc = this.random.pick(this.alive());
    const retry = () =>
      this.deliver(event, attempt + 1, Math.min(30_000, 500 * 2 ** attempt) + this.random.int(0, 500));
    if (!proc || this.random.chance(0.1)) return retry(); // nobody up, or the request lost on the way
    const payload: PaymentEvent = {
      id: this.random.chance(0.2) ? event.id.toUpperCase() : event.id,
      webhook_id: '00000000-0000-4000-8000-000000000001',
      event: `payment_intent.${event.state}`,
      data: { payment_intent: { id: this.random.anyCase(event.intent), state: event.state } },
      metadata: null,
    } as PaymentEvent;
    // The receiver lower-cases event ids when it parses a delivery.
    payload.id = payload.id.toLowerCase();
    const dispatcher = this.traced(proc, proc.dispatchers.get(event.instance)!, true);
    // A process that dies mid-delivery never answers: the service's request times out, and it retries.
    const result = await Promise.race([
      dispatcher.dispatch(payload, { receivedAt: new Date(), deliveryAttempt: attempt }),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 15_000)),
    ]);
    if (result === undefined) {
      this.log(`${event.instance}: event ${event.id} to process ${proc.id}: no answer`);
      return retry();
    }
    const status = DISPATCH_OUTCOME_STATUS[result.outcome];
    this.log(
      `${event.instance}: event ${event.id} (${event.state}) to process ${proc.id}: ${status} ${result.outcome}`,
    );
    for (const { handler, status: ran } of result.handlers) {
      if (status === 200 && (ran === 'superseded' || ran === 'gone')) this.notRun.add(`${event.id}|${handler}`);
    }
    if (result.outcome === 'superseded') this.current.superseded++;
    if (status === 200) {
      event.delivered = true;
      // An operator resends a delivered event now and then.
      if (this.random.chance(0.1)) this.deliver(event, attempt + 1, this.random.int(1_000, 20_000));
    } else retry();
  }

  // --- handlers and their effects ------------------------------------------------------------------

  /** The dispatcher as the module gives it to its callers, noting which handler effects each call wrote. */
  private traced(proc: SimProcess, dispatcher: PaymentEventsDispatch, delivery = false): PaymentEventsDispatch {
    return {
      dispatch: (event: PaymentEvent, meta: DispatchMeta) => {
        const trace: DispatchTrace = { proc, delivery, effects: [], tokens: [], told: [] };
        this.inFlight.set(event, trace);
        this.openTraces.add(trace);
        const settled = (result: DispatchResult): DispatchResult => {
          this.openTraces.delete(trace);
          // Every run this dispatch claimed (and heard of) was completed or released before it answered.
          for (const { token, slot } of trace.tokens) {
            if (!this.engine.ended.has(token) && proc.alive) {
              this.violate({
                kind: 'claim left held',
                detail: `process ${proc.id} answered ${event.event} ${event.id} (${result.outcome}) holding ${slot}, never completed nor released`,
                intent: String((event.data as { payment_intent?: { id?: unknown } }).payment_intent?.id ?? ''),
              });
            }
          }
          // Every plug-in was told of the dispatch, even after another one's hook threw.
          if (!trace.told!.includes(event.id)) {
            this.violate({
              kind: 'plug-in not told',
              detail: `process ${proc.id} answered ${event.event} ${event.id} (${result.outcome}) without telling the app's plug-in (afterDispatch)`,
              intent: String((event.data as { payment_intent?: { id?: unknown } }).payment_intent?.id ?? ''),
            });
          }
          // A handler that ran but whose completion the store did not record may run again.
          const unrecorded = result.handlers.some(
            (h) => h.status === 'store_unavailable' && h.durationMs !== undefined,
          );
          if (unrecorded) for (const effect of trace.effects) this.excuse(effect);
          return result;
        };
        const result = this.dispatching.run(trace, () => dispatcher.dispatch(event, meta));
        return typeof (result as Promise<DispatchResult>).then === 'function'
          ? (result as Promise<DispatchResult>).then(settled)
          : settled(result as DispatchResult);
      },
    };
  }

  /**
   * A completion whose answer was lost (applied or not): its handler ran, and may run again once its
   * lease lapses (the at-least-once window the docs name), whether or not the dispatch has settled.
   */
  private completionLost(instance: InstanceName, key: string, completion: RunCompletion): void {
    const intent = key.slice(-36);
    const [state, handler] = completion.slot.split('|') as [string, string];
    // A retrieve's run of a recurring state (a superseded delivery's current state) has the retrieve's event id.
    const occurrence = FINAL.includes(state)
      ? `${intent}:${state}`
      : (completion.eventId ?? reconciledEvent('payment_intent', state, { id: intent } as PaymentIntent).id);
    this.excuse(`${instance}|${occurrence}|${handler}`);
  }

  private excuse(effect: string): void {
    this.excused.set(effect, (this.excused.get(effect) ?? 0) + 1);
  }

  private async runHandler(
    proc: SimProcess,
    instance: InstanceName,
    handler: string,
    event: PaymentEvent,
    ctx: PaymentEventContext,
  ): Promise<void> {
    // A superseded delivery's current state is dispatched within the delivery's dispatch: its trace.
    const trace = this.inFlight.get(event) ?? this.dispatching.getStore();
    const current = this.optsIn(proc, handler)
      ? this.currentRunStarts(proc, instance, handler, event, ctx, trace)
      : undefined;
    try {
      await this.handlerBody(proc, instance, handler, event, ctx, trace);
    } finally {
      if (current) this.running.get(current.key)?.delete(current);
    }
  }

  /** Whether `handler` runs on the current state in `proc`'s release (its own `current`, else the release's). */
  private optsIn(proc: SimProcess, handler: string): boolean {
    return HANDLERS.find((h) => h.id === handler)?.current ?? proc.release.currentState;
  }

  /**
   * An opted-in handler starts: it runs on a retrieve the service answered, for the state the intent was
   * in then (a); never on a place in the intent's history before one an opted-in handler of this intent
   * ran on (b); never beside a run of another state of the intent (e). A run whose process stalled past
   * its lease is the documented window (another process took its claim) and is not held to (b) and (e).
   */
  private currentRunStarts(
    proc: SimProcess,
    instance: InstanceName,
    handler: string,
    event: PaymentEvent,
    ctx: PaymentEventContext,
    trace: DispatchTrace | undefined,
  ): CurrentRun | undefined {
    const intentId = String(
      (event.data as { payment_intent?: { id?: unknown } }).payment_intent?.id ?? '',
    ).toLowerCase();
    const state = event.event.slice('payment_intent.'.length);
    const key = `${instance}|${intentId}`;
    const where = `${instance}: process ${proc.id} ${handler} for ${intentId} ${state} (${ctx.source}, event ${event.id})`;
    const truth = ctx.intent === undefined ? undefined : this.retrieves.get(ctx.intent);
    if (truth === undefined) {
      this.violate({
        kind: 'opted-in without retrieve',
        detail: `${where} ran with ${ctx.intent === undefined ? 'no ctx.intent' : 'an intent no retrieve answered'}`,
        intent: intentId,
      });
      return undefined;
    }
    this.current.runs++;
    const history = this.intents.get(intentId)?.history ?? [];
    this.log(`${where} starts on the retrieve of #${truth.index} (${truth.state})`);
    if (truth.state !== state) {
      this.violate({
        kind: 'ran on a left state',
        detail: `${where} ran, but the retrieve it ran on found ${truth.state} (#${truth.index} of ${history.join(' > ')})`,
        intent: intentId,
      });
    }
    const lapsed = trace?.lapsed === true;
    const furthest = this.seenIndex.get(key) ?? -1;
    if (truth.index < furthest) {
      this.violate({
        kind: 'state went back',
        detail: `${where} ran on #${truth.index} after an opted-in handler ran on #${furthest} (${history.join(' > ')})`,
        intent: intentId,
      });
    }
    this.seenIndex.set(key, Math.max(furthest, truth.index));
    let runs = this.running.get(key);
    if (runs === undefined) this.running.set(key, (runs = new Set()));
    const beside = [...runs].find((run) => run.state !== state && !run.trace?.lapsed && !lapsed);
    if (beside !== undefined) {
      this.violate({
        kind: 'runs overlap',
        detail: `${where} started while process ${beside.proc.id} ran ${beside.handler} for ${beside.state} (event ${beside.event})`,
        intent: intentId,
      });
    }
    const run: CurrentRun = { key, proc, state, handler, event: event.id, trace };
    runs.add(run);
    return run;
  }

  private async handlerBody(
    proc: SimProcess,
    instance: InstanceName,
    handler: string,
    event: PaymentEvent,
    ctx: PaymentEventContext,
    trace: DispatchTrace | undefined,
  ): Promise<void> {
    if (this.random.chance(0.08)) throw new Error(`${handler} failed (simulated)`);
    // Most handlers are quick; some outlast the claim's lease (renewed while they run).
    let ms = this.random.chance(0.05) ? this.random.int(20_000, 45_000) : this.random.int(0, 2_000);
    // Now and then the process pauses while this handler runs, past the lease: its claim lapses.
    let stalled = false;
    if (this.random.chance(0.05)) {
      const pause = this.random.int(21_000, 40_000);
      this.stall(proc, pause);
      ms += pause;
      stalled = true;
    }
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (!proc.alive) return new Promise(() => undefined);
    // Some fail after their work (a paused one often: its connections broke), when the claim may be
    // another's by now.
    if (this.random.chance(stalled ? 0.5 : 0.04)) throw new Error(`${handler} failed after its work (simulated)`);
    const intentId = String(
      (event.data as { payment_intent?: { id?: unknown } }).payment_intent?.id ?? '',
    ).toLowerCase();
    const state = event.event.slice('payment_intent.'.length);
    const intent = this.intents.get(intentId);
    if (!intent || intent.instance !== instance) {
      this.violate({ kind: 'foreign intent', detail: `${instance} ran ${handler} for ${intentId}`, intent: intentId });
      return;
    }
    const terminal = FINAL.includes(state);
    // A delivery's dispatch of `reconciliation` source: a superseded delivery's current state, any state.
    if (ctx.source === 'reconciliation' && !terminal && !trace?.delivery) {
      this.violate({
        kind: 'non-terminal reconciled',
        detail: `${handler} for ${intentId} in ${state}`,
        intent: intentId,
      });
    }
    // One occurrence per final state of an intent; a recurring state's occurrence is its event.
    const occurrence = terminal ? `${intentId}:${state}` : event.id;
    const effect = `${instance}|${occurrence}|${handler}`;
    // A transactional handler's effect is its transaction's: written when it commits, and never excused.
    if (ctx.transaction !== undefined) {
      this.inboxDb.onCommit(ctx.transaction, () =>
        this.wrote(proc, instance, handler, event, ctx, effect, occurrence, intentId, state, undefined),
      );
      return;
    }
    this.wrote(proc, instance, handler, event, ctx, effect, occurrence, intentId, state, trace);
  }

  private wrote(
    proc: SimProcess,
    instance: InstanceName,
    handler: string,
    event: PaymentEvent,
    ctx: PaymentEventContext,
    effect: string,
    occurrence: string,
    intentId: string,
    state: string,
    trace: DispatchTrace | undefined,
  ): void {
    if (trace?.lapsed) this.excuse(effect);
    const count = (this.effects.get(effect) ?? 0) + 1;
    this.effects.set(effect, count);
    trace?.effects.push(effect);
    this.log(
      `${instance}: process ${proc.id} ${handler} for ${intentId} ${state} (${ctx.source}, event ${event.id}) #${count}`,
    );
    if (count > 1 + (this.excused.get(effect) ?? 0)) {
      this.violate({ kind: 'double effect', detail: `${effect} ran ${count} times`, intent: intentId });
    }
    // A handler keys its order on event.id (as the README's does): one id, one occurrence.
    const seen = this.eventIds.get(`${instance}|${event.id}|${handler}`);
    if (!/^[0-9a-f-]{36}$/.test(event.id)) {
      this.violate({ kind: 'event id', detail: `${handler} got event id '${event.id}'`, intent: intentId });
    } else if (seen !== undefined && seen !== occurrence) {
      this.violate({ kind: 'event id', detail: `${event.id} stood for ${seen} and ${occurrence}`, intent: intentId });
    }
    this.eventIds.set(`${instance}|${event.id}|${handler}`, occurrence);
  }

  // --- the sweeper lease ---------------------------------------------------------------------------

  /** Every retrieve is sent by a process holding its instance's sweeper lease in the engine. */
  private onRetrieve(proc: SimProcess, instance: InstanceName, id: string): void {
    const reconciler = proc.reconcilers.get(instance);
    const owner = reconciler ? (reconciler as unknown as { owner: string }).owner : undefined;
    const list = this.engine.watchLists.get(instance === 'default' ? '' : instance);
    const lease = list?.lease;
    if (!lease || lease.owner !== owner || lease.until <= Date.now()) {
      this.violate({
        kind: 'sweeper without lease',
        detail: `process ${proc.id} retrieved ${id} for ${instance} while ${lease ? `${lease.owner === owner ? 'its lease ended' : 'another process held the lease'}` : 'no lease was held'}`,
        intent: id.toLowerCase(),
      });
    }
  }

  // --- the scenario --------------------------------------------------------------------------------

  /** Schedules the whole run on the (fake) clock: intents, their states, crashes, deploys. */
  schedule(): void {
    const { settings, random } = this;
    this.release = random.pick(RELEASES);
    for (let i = 0; i < settings.processes; i++) this.start(this.release);
    for (const instance of INSTANCES) {
      for (let n = 0; n < settings.intentsPerInstance; n++) {
        const created = random.int(0, settings.chaosMs / 2);
        setTimeout(() => this.createIntent(instance), created);
        setTimeout(() => this.evolve(instance, n), created + random.int(100, 2_000));
      }
    }
    for (let c = 0; c < settings.crashes; c++) {
      setTimeout(
        () => {
          const victim = random.pick(this.alive());
          if (!victim) return;
          this.crash(victim);
          setTimeout(() => this.start(this.release), random.int(500, 5_000)); // the release deployed by then
        },
        random.int(1_000, settings.chaosMs),
      );
    }
    for (let p = 0; p < settings.stalls; p++) {
      setTimeout(
        () => {
          const victim = random.pick(this.alive());
          if (victim) this.stall(victim, random.int(21_000, 40_000));
        },
        random.int(1_000, settings.chaosMs),
      );
    }
    for (let d = 0; d < settings.deploys; d++) {
      setTimeout(
        () => {
          this.release = random.pick(RELEASES);
          this.log(`rolling deploy to ${this.release.label}`);
          this.rollTo(this.release, 0);
        },
        random.int(1_000, settings.chaosMs),
      );
    }
    this.engine.faults = { failBefore: settings.storeFaults, failAfter: settings.storeFaults / 2 };
    setTimeout(() => this.quiesce(), settings.chaosMs);
  }

  /** A rolling deploy: one process at a time stops and a process of the new release starts. */
  private rollTo(release: Release, step: number): void {
    if (this.release !== release) return; // a later deploy took over
    const old = this.alive().find((proc) => proc.release !== release);
    if (!old || step > 10) return;
    this.crash(old);
    this.start(release);
    setTimeout(() => this.rollTo(release, step + 1), this.random.int(500, 3_000));
  }

  /** The states of one intent: some recurring states, then (most of the time) a final one. */
  private evolve(instance: InstanceName, n: number): void {
    const intent = [...this.intents.values()].filter((i) => i.instance === instance)[n];
    if (!intent) return;
    const steps = this.random.int(0, 2);
    let at = 0;
    for (let s = 0; s < steps; s++) {
      at += this.random.int(200, 4_000);
      setTimeout(() => this.transition(intent.id, this.random.pick(RECURRING)), at);
    }
    // Half of them are captured: requires_capture, then succeeded, errored_capture or cancelled.
    const captured = this.random.chance(0.5);
    if (captured) {
      at += this.random.int(200, 4_000);
      setTimeout(() => this.transition(intent.id, 'requires_capture'), at);
    }
    if (this.random.chance(0.85)) {
      at += this.random.int(200, 4_000);
      const final = this.random.pick(captured ? CAPTURED : FINAL.filter((state) => state !== 'errored_capture'));
      setTimeout(() => this.transition(intent.id, final), at);
    }
  }

  /** End of the chaos: no faults nor crashes; every process on a release with reconciliation on. */
  private quiesce(): void {
    this.engine.faults = { failBefore: 0, failAfter: 0 };
    this.release = this.random.pick(QUIET_RELEASES);
    this.log(`quiescence: faults off, every process reconciling (${this.release.label})`);
    this.rollTo(this.release, 0);
  }

  /** At quiescence: every final state that could be known has run each of its handlers; nothing is watched. */
  checkQuiescence(): void {
    for (const intent of this.intents.values()) {
      if (!FINAL.includes(intent.state)) continue;
      const event = [...this.events].reverse().find((e) => e.intent === intent.id && e.state === intent.state)!;
      const watched = this.engine.watchLists
        .get(intent.instance === 'default' ? '' : intent.instance)
        ?.everWatched.has(intent.id);
      // Knowable: its webhook came, or the reconciler of its instance watched it, can retrieve it, and
      // the final release counts its state as terminal.
      const reconcilable = watched && !intent.stuck && FINAL_TERMINAL.includes(intent.state);
      if (!event.delivered && !reconcilable) continue;
      for (const handler of HANDLERS) {
        if (!handler.patterns.some((p) => p === 'payment_intent.*' || p === `payment_intent.${intent.state}`)) continue;
        const effect = `${intent.instance}|${intent.id}:${intent.state}|${handler.id}`;
        if (!this.effects.get(effect)) {
          this.violate({
            kind: 'lost effect',
            detail: `${effect} never ran (webhook ${event.delivered ? 'delivered' : 'lost'}, ${watched ? 'watched' : 'not watched'})`,
            intent: intent.id,
          });
        }
      }
    }
    // Every delivered event of a recurring state ran each of its handlers once: under its own id, or
    // under the id of a retrieve's run of that state (a superseded delivery's current state: the webhook
    // of a state a retrieve already ran is that run's), unless a 200 answer said the handler, opted in,
    // did not run because the intent had left the state (superseded) or was gone.
    const usedStandIns = new Set<string>();
    for (const event of this.events) {
      if (!event.delivered || FINAL.includes(event.state)) continue;
      const retrieved = reconciledEvent('payment_intent', event.state, { id: event.intent } as PaymentIntent).id;
      // A retrieve's run stands for one webhook of its state, never for two.
      for (const handler of HANDLERS) {
        if (!handler.patterns.some((p) => p === 'payment_intent.*' || p === `payment_intent.${event.state}`)) continue;
        if (this.notRun.has(`${event.id}|${handler.id}`)) continue;
        const effect = `${event.instance}|${event.id}|${handler.id}`;
        if (this.effects.get(effect)) continue;
        const standIn = `${event.instance}|${retrieved}|${handler.id}`;
        if (this.effects.get(standIn) && !usedStandIns.has(standIn)) {
          usedStandIns.add(standIn);
          continue;
        }
        this.violate({ kind: 'lost effect', detail: `${effect} (${event.state}) never ran`, intent: event.intent });
      }
    }
    // A claim whose owner (alive, and told it was granted) never completed nor released it is held
    // until its lease ends: every redelivery meanwhile is answered 409 for nothing.
    // A dispatch still in flight holds its claims (current-state handling: a redelivery of a stuck
    // intent's event waits on its retrieve, every 30 s forever): only a claim nobody is running counts.
    const now = Date.now();
    const inFlight = new Set([...this.openTraces].flatMap((trace) => trace.tokens.map(({ token }) => token)));
    for (const [key, record] of Object.entries(this.engine.records.snapshot())) {
      for (const [slot, run] of Object.entries(record.runs)) {
        const granted = run.owner === undefined ? undefined : this.engine.granted.get(run.owner);
        if (granted === undefined || !granted.heard || run.until <= now || this.engine.ended.has(run.owner!)) continue;
        if (inFlight.has(run.owner!)) continue;
        if (!this.processes[granted.proc]?.alive) continue;
        this.violate({
          kind: 'claim left held',
          detail: `${key} ${slot}: process ${granted.proc} never completed nor released it`,
          intent: key.slice(-36),
        });
      }
    }
    for (const [scope, list] of this.engine.watchLists) {
      for (const { id } of list.watched()) {
        this.violate({ kind: 'watched forever', detail: `${scope || 'default'} still watches ${id}`, intent: id });
      }
    }
  }

  /** The trace cut to what concerns the first violation's intent (and the deploys and crashes). */
  minimalTrace(): string[] {
    const first = this.violations[0];
    if (!first?.intent) return this.trace.slice(-60);
    const intent = first.intent;
    return this.trace.filter(
      (line) =>
        line.toLowerCase().includes(intent) ||
        /process \d+ (starts|crashes|stalls)|deploy|quiescence|VIOLATION/.test(line),
    );
  }
}
