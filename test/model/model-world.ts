import 'reflect-metadata';
import {
  MemoryIdempotencyStore,
  standardWebhooksVerifier,
  type PaymentEvent,
  type PaymentEventContext,
} from '../../lib/index.js';
import type { PaymentsRuntime } from '../../lib/testing/index.js';
import {
  PaymentEventsRegistry,
  PaymentsReconciler,
  type IdempotencyClaim,
  type IdempotencyStore,
  type IntentWatchStore,
  type PaymentsTransactionRunner,
  type RunClaimRequest,
  type RunCompletion,
  type RunRelease,
  type RunRenewal,
  type WatchedIntent,
} from '../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import type { DispatchResult } from '../../lib/webhooks/contracts/dispatch-result.types.js';
import type { PaymentsDispatchPlugin } from '../../lib/webhooks/contracts/dispatch-plugin.interface.js';
import { validateWebhooksOptions } from '../../lib/webhooks/payments-webhooks.validator.js';
import { dispatchPluginsOf } from '../../lib/webhooks/payments-webhooks.plugins.js';
import { PaymentsInbox } from '../../lib/webhooks/transactional/payments-inbox.js';
import { ScriptedInboxDatabase } from './scripted-inbox.database.js';
import { Scheduler, type Bounds } from './model-scheduler.js';

/*
 * The system under test of the protocol's model check: the production dispatcher, reconciler, watch-list
 * settlement and transactional inbox, over the production in-memory store (the engine) reached through
 * a scripted connection whose every call is a step of the scheduler. Handlers, retrieves and the
 * inbox's database are steps too. Actors share one intent.
 */

/** A release of the app: the options its processes run with. */
export interface Release {
  readonly label: string;
  readonly reconcile?: Record<string, unknown>;
}

export type Actor =
  | { readonly name: string; readonly kind: 'webhook'; readonly release: Release; readonly event: string }
  | { readonly name: string; readonly kind: 'sweep'; readonly release: Release };

export interface Scenario {
  readonly name: string;
  /** The intent's state, shown by every webhook and retrieve. */
  readonly state: string;
  readonly handlers: readonly string[];
  readonly actors: readonly Actor[];
  /** The handlers run in the transactional inbox. */
  readonly inbox?: boolean;
  /** The intent is watched when the run starts (created by a release with reconciliation on). */
  readonly watched: boolean;
}

export const LEASE_MS = 30_000;
export const INTENT = '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const RECONCILE = { afterSeconds: 0, everySeconds: 5, batchSize: 4, maxRetrievesPerSecond: 100, maxAgeSeconds: 3600 };

export const RELEASES = {
  off: { label: 'reconcile off' },
  on: { label: 'reconcile on', reconcile: RECONCILE },
  succeededOnly: {
    label: 'reconcile on, succeeded only',
    reconcile: { ...RECONCILE, terminalStates: { payment_intent: ['succeeded'] } },
  },
} satisfies Record<string, Release>;

/** What a run did, as the invariants read it. */
export interface Violation {
  readonly kind: string;
  readonly detail: string;
}

const TERMINAL_BY_DEFAULT = ['succeeded', 'cancelled'];

/** One run of a scenario: the world, its scheduler, and what the invariants need. */
export class World {
  readonly engine: MemoryIdempotencyStore;
  readonly watchList: IntentWatchStore;
  readonly inboxDb = new ScriptedInboxDatabase();
  readonly violations: Violation[] = [];
  /** Runs of each effect (`<state>|<handler>`, or `<event>|<handler>` for a state that recurs). */
  readonly effects = new Map<string, number>();
  /** Runs an effect may have beyond its first (a completion lost, a lease lapsed while it ran). */
  readonly excused = new Map<string, number>();
  /** Runs claimed and not completed yet: slot -> the effect it would write. */
  private readonly inFlight = new Map<string, string>();
  /** The sweeper lease as the engine granted it. */
  private sweeper: { owner: string; until: number } | undefined;
  private readonly tokens = new Map<string, string>();
  /** Tokens whose owner sent a completion or a release (whatever became of it). */
  private readonly ended = new Set<string>();
  private readonly runtime: PaymentsRuntime;
  private readonly actorsDone = new Set<string>();
  readonly answers: string[] = [];

  constructor(
    readonly scenario: Scenario,
    readonly sched: Scheduler,
  ) {
    this.engine = new MemoryIdempotencyStore({ now: () => sched.clock, maxEntries: 1000 });
    this.watchList = this.engine.intentWatchStore();
    this.runtime = {
      now: () => sched.clock,
      sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
      random: () => 0.5,
    };
  }

  /** Starts every actor (each runs to its first await). */
  start(): void {
    if (this.scenario.watched) {
      this.watchList.watch({
        kind: 'payment_intent',
        id: INTENT,
        createdAt: this.sched.clock,
        nextCheckAt: 0,
        checks: 0,
      });
    }
    for (const actor of this.scenario.actors) this.launch(actor);
  }

  launch(actor: Actor): void {
    const before = this.sched.actor;
    this.sched.actor = actor.name;
    try {
      const done = (result: unknown) => {
        this.actorsDone.add(actor.name);
        this.answers.push(`${actor.name}: ${summary(result)}`);
      };
      if (actor.kind === 'webhook') {
        const { dispatcher } = this.process(actor.release, actor.name);
        void Promise.resolve(
          dispatcher.dispatch(this.event(actor.event), { receivedAt: new Date(this.sched.clock) }),
        ).then(done, (error: unknown) => this.violate('dispatch rejected', `${actor.name}: ${String(error)}`));
      } else {
        const { reconciler } = this.process(actor.release, actor.name);
        void reconciler.sweep().then(done, (error: unknown) => this.violate('sweep rejected', String(error)));
      }
    } finally {
      this.sched.actor = before;
    }
  }

  finished(actor: string): boolean {
    return this.actorsDone.has(actor);
  }

  private event(id: string): PaymentEvent {
    return {
      id,
      webhook_id: '00000000-0000-4000-8000-000000000001',
      event: `payment_intent.${this.scenario.state}`,
      data: { payment_intent: { id: INTENT, state: this.scenario.state } },
      metadata: null,
    } as PaymentEvent;
  }

  /** One process of a release: its dispatcher (and reconciler), over this world's engine. */
  private process(release: Release, name: string) {
    const store = this.connection();
    const webhooks = validateWebhooksOptions(
      {
        verifier: standardWebhooksVerifier({ secrets: SECRET }),
        store,
        claimTtlSeconds: LEASE_MS / 1000,
        // Reconciliation is on by default: a release without it says so.
        reconcile: release.reconcile ?? false,
        ...(this.scenario.inbox ? { transactions: { runner: this.inboxRunner(), createTable: false } } : {}),
      },
      'sandbox',
    );
    if (webhooks === false) throw new Error('unreachable');
    const registry = new PaymentEventsRegistry();
    for (const id of this.scenario.handlers) {
      registry.register({
        id,
        patterns: [`payment_intent.${this.scenario.state}` as never],
        options: this.scenario.inbox ? { transactional: true } : undefined,
        invoke: (event: PaymentEvent, ctx: PaymentEventContext) => this.handler(id, event, ctx),
      });
    }
    const client = this.client(name);
    const watchList = webhooks.reconcile ? this.watchConnection() : undefined;
    const plugins: PaymentsDispatchPlugin[] = dispatchPluginsOf(webhooks, {
      watchList,
      inbox: this.scenario.inbox ? new PaymentsInbox(webhooks, this.runtime, registry) : undefined,
    });
    const dispatcher = new PaymentEventsDispatcher(registry, store, webhooks, this.runtime, client, undefined, plugins);
    const reconciler = watchList
      ? new PaymentsReconciler(webhooks, watchList, dispatcher, client, this.runtime)
      : (undefined as unknown as PaymentsReconciler);
    return { dispatcher, reconciler };
  }

  /**
   * A handler run: a local step that succeeds, writing its effect (in the inbox: when its transaction
   * commits), or throws (a fault: the receiver releases it for a redelivery). A lease lapsing while it
   * runs is the same, for every other actor, as one lapsing before its completion lands, which the
   * scheduler explores.
   */
  private handler(id: string, event: PaymentEvent, ctx: PaymentEventContext): Promise<void> {
    const effect = this.effectOf(id, ctx.source === 'reconciliation' ? 'retrieved' : event.id);
    return this.sched.step(
      'handler',
      `${id} runs`,
      true,
      () => {
        if (!this.scenario.inbox) this.wrote(effect);
        else this.inboxDb.onCommit(ctx.transaction, () => this.wrote(effect));
      },
      true,
    );
  }

  private effectOf(handler: string, eventId: string): string {
    const state = this.scenario.state;
    return `${state.startsWith('requires_') ? eventId : state}|${handler}`;
  }

  private wrote(effect: string): void {
    const count = (this.effects.get(effect) ?? 0) + 1;
    this.effects.set(effect, count);
    this.sched.trace.push(`   effect ${effect} #${count}`);
    if (count > 1 + (this.excused.get(effect) ?? 0)) this.violate('double effect', `${effect} ran ${count} times`);
  }

  private excuse(effect: string, why: string): void {
    this.excused.set(effect, (this.excused.get(effect) ?? 0) + 1);
    this.sched.trace.push(`   excused once more: ${effect} (${why})`);
  }

  /** The clock jumped past every lease: each run in flight may run again (the documented window). */
  lapsed(): void {
    if (this.scenario.inbox) return; // the inbox's row commits with the effect: no window
    for (const effect of this.inFlight.values()) this.excuse(effect, 'its lease lapsed while it ran');
  }

  violate(kind: string, detail: string): void {
    this.violations.push({ kind, detail });
    this.sched.trace.push(`VIOLATION ${kind}: ${detail}`);
  }

  /** The engine through one connection: each call a step, its token named after the actor it went to. */
  private connection(): IdempotencyStore {
    const sched = this.sched;
    const engine = this.engine;
    const slotEffect = (slot: string, eventId: string | undefined) =>
      this.effectOf(slot.slice(slot.indexOf('|') + 1), eventId ?? 'retrieved');
    return {
      claim: (key: string, request: RunClaimRequest) =>
        sched.step('claim', `claim ${request.slot}${request.eventId ? '' : ' (retrieved)'}`, true, () => {
          const claim = engine.claim(key, request) as IdempotencyClaim;
          // A claim that lands after its caller gave up: nobody holds its token; its lease just lapses.
          if (claim.status === 'claimed' && sched.landingLate) this.ended.add(claim.token);
          if (claim.status === 'claimed') {
            this.tokens.set(claim.token, `${sched.actor}#${claim.attempt}`);
            this.inFlight.set(`${request.slot} ${claim.token}`, slotEffect(request.slot, request.eventId));
          }
          return claim;
        }),
      complete: (key: string, completion: RunCompletion) => {
        this.ended.add(completion.token);
        return sched
          .step('complete', `complete ${completion.slot} ${this.tokens.get(completion.token) ?? '?'}`, true, () => {
            engine.complete(key, completion);
            this.inFlight.delete(`${completion.slot} ${completion.token}`);
          })
          .catch((error: unknown) => {
            // A completion whose answer was lost: the run may happen again once its lease lapses.
            if (!this.scenario.inbox)
              this.excuse(slotEffect(completion.slot, completion.eventId), 'its completion was lost');
            throw error;
          });
      },
      release: (key: string, release: RunRelease) =>
        (this.ended.add(release.token), sched).step(
          'release',
          `release ${release.slot} ${this.tokens.get(release.token) ?? '?'}`,
          true,
          () => {
            engine.release(key, release);
            this.inFlight.delete(`${release.slot} ${release.token}`);
          },
        ),
      renew: (key: string, renewal: RunRenewal) =>
        sched.step('renew', `renew ${renewal.slot} ${this.tokens.get(renewal.token) ?? '?'}`, true, () =>
          engine.renew(key, renewal),
        ),
    };
  }

  /** The records' watch list through one connection, the sweeper lease mirrored for the invariant. */
  private watchConnection(): IntentWatchStore {
    const sched = this.sched;
    const list = this.watchList;
    return {
      inRecords: true,
      watch: (intent: WatchedIntent) => sched.step('watch', 'watch', true, () => void list.watch(intent)),
      due: (now: number, limit: number) =>
        sched.step('due', 'due', true, () => list.due(now, limit) as WatchedIntent[]),
      reschedule: (id: string, next: number, checks: number) =>
        sched.step('reschedule', `reschedule (checks ${checks})`, true, () => void list.reschedule(id, next, checks)),
      forget: (id: string) => sched.step('forget', 'forget', true, () => void list.forget(id)),
      lease: (owner: string, ms: number) =>
        sched.step('lease', 'sweeper lease', true, () => {
          const held = list.lease(owner, ms) as boolean;
          if (held) this.sweeper = { owner: sched.actor, until: sched.clock + ms };
          return held;
        }),
    };
  }

  /** The service's retrieve, as the reconciler calls it: sent only by the sweeper holding the lease. */
  private client(name: string) {
    const retrieve = (id: string) => {
      const lease = this.sweeper;
      if (lease === undefined || lease.owner !== this.sched.actor || lease.until <= this.sched.clock) {
        this.violate(
          'sweeper without lease',
          `${this.sched.actor} retrieved ${id} while ${lease ? `${lease.owner} held the lease until ${lease.until}` : 'nobody held it'}`,
        );
      }
      return this.sched.step('retrieve', `retrieve (${name})`, true, () => ({
        id,
        state: this.scenario.state,
        amount: 100,
      }));
    };
    return {
      paymentIntents: { retrieve },
      setupIntents: { retrieve },
      onIntentCreated: () => () => undefined,
    } as never;
  }

  /** The inbox's transactions on the scripted database: begin, the inbox statement and commit are steps. */
  private inboxRunner(): PaymentsTransactionRunner {
    return this.inboxDb.runner(this.sched);
  }

  /** Nothing in flight: every step run, every actor done. */
  idle(): boolean {
    return this.sched.pending.length === 0;
  }

  /** The state key of this run now: what decides everything that can follow. */
  key(): string {
    const snapshot = this.engine.snapshot();
    const tokenName = (token: string | undefined) => (token === undefined ? '-' : (this.tokens.get(token) ?? token));
    const records = Object.entries(snapshot)
      .map(([key, record]) => {
        const runs = Object.entries(record.runs)
          .map(([slot, run]) => `${slot}:${tokenName(run.owner)}:${run.until - this.sched.clock}:${run.attempt}`)
          .sort()
          .join(',');
        return `${key}{${record.done.replace(/\t[0-9a-z]+(?=\n|$)/g, '')}|v${record.version}|${runs}|${record.watched ? 'w' : ''}}`;
      })
      .sort()
      .join('');
    return [
      records,
      JSON.stringify(this.watchList.list?.() ?? []),
      this.sweeper ? `${this.sweeper.owner}:${this.sweeper.until - this.sched.clock}` : '-',
      this.sched.pendingKey(),
      this.sched.timersKey(),
      [...this.effects].sort().join(','),
      [...this.excused].sort().join(','),
      [...this.inFlight.values()].sort().join(','),
      this.inboxDb.key(),
      `f${this.sched.faults} l${this.sched.lapses}`,
      [...this.actorsDone].sort().join(','),
    ].join('#');
  }

  /**
   * After the run: faults stop and time goes on. The service redelivers the event until it is answered
   * 200, a last sweep runs, and then every invariant of the promise must hold: each effect ran, nothing
   * stays watched, no claim is left held.
   */
  async epilogue(runPending: () => Promise<void>, lapse: () => Promise<void>): Promise<void> {
    // Every actor is done: a run still owned by a token whose owner never completed nor released it
    // was left held (a redelivery would be answered 409 until its lease ends).
    for (const [key, record] of Object.entries(this.engine.snapshot())) {
      for (const [slot, run] of Object.entries(record.runs)) {
        if (run.owner !== undefined && !this.ended.has(run.owner) && run.until > this.sched.clock) {
          this.violate(
            'claim left held',
            `${key} ${slot} held by ${this.tokens.get(run.owner) ?? run.owner}, never completed nor released`,
          );
        }
      }
    }
    this.sched.ghosts.length = 0;
    this.inboxDb.abortOpen();
    await runPending();
    for (let i = 0; i < 3; i++) {
      await lapse();
      await runPending();
    }
    // The service redelivers each event until it is answered 200.
    const events = [
      ...new Set(this.scenario.actors.flatMap((actor) => (actor.kind === 'webhook' ? [actor.event] : []))),
    ];
    for (const [n, event] of events.entries()) {
      for (let attempt = 1; attempt <= 4; attempt++) {
        const answered = this.answers.length;
        this.launch({ name: `final${n}.${attempt}`, kind: 'webhook', release: RELEASES.on, event });
        await runPending();
        if (/: (handled|duplicate)/.test(this.answers[answered] ?? '')) break;
        await lapse();
        await runPending();
      }
    }
    for (let sweep = 1; sweep <= 3; sweep++) {
      this.launch({ name: `sweep${sweep}`, kind: 'sweep', release: RELEASES.on });
      await runPending();
      await lapse();
      await runPending();
    }
    for (const handler of this.scenario.handlers) {
      for (const actor of this.scenario.actors) {
        if (actor.kind !== 'webhook') continue;
        const effect = this.effectOf(handler, actor.event);
        if (!this.effects.get(effect)) this.violate('lost effect', `${effect} never ran`);
      }
    }
    if (TERMINAL_BY_DEFAULT.includes(this.scenario.state) && (this.watchList.list?.() as WatchedIntent[]).length > 0) {
      this.violate('watched forever', `${INTENT} is still watched after its terminal state settled`);
    }
    if (this.inboxDb.locked()) this.violate('inbox lock left', 'a transaction never ended');
  }
}

function summary(result: unknown): string {
  const outcome = (result as DispatchResult | undefined)?.outcome;
  if (outcome !== undefined) return outcome;
  return JSON.stringify(result);
}

export type { Bounds };
