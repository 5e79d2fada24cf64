import { PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import { SIMULATOR_ARGUMENT_MESSAGES } from './payments-simulator.messages.js';
import { isTimerMs } from './simulator-timers.js';
/** `rateLimit` modes: the next N API requests, or a steady fraction of them, answer 429. */
export type RateLimitRule =
  { next: number; retryAfterSeconds?: number } | { ratio: number; retryAfterSeconds?: number };

/** Order in which held (or batched) deliveries are started. */
export type DeliveryOrder = 'fifo' | 'reverse' | 'shuffle';

/** `items` in `order` (a copy); `shuffle` draws from `random` (Fisher-Yates). */
export function ordered<T>(items: readonly T[], order: DeliveryOrder, random: () => number): T[] {
  if (order === 'fifo') return [...items];
  if (order === 'reverse') return [...items].reverse();
  const shuffled = [...items];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  return shuffled;
}

/**
 * Misbehaviours of the service a test can switch on: throttling, duplicate deliveries, out-of-order
 * deliveries, delayed deliveries. Reached as `simulator.controls`.
 */
export class SimulatorControls {
  #rate:
    | { kind: 'next'; left: number; retryAfter: number }
    | { kind: 'ratio'; ratio: number; seen: number; retryAfter: number }
    | undefined;
  #duplicates = { copies: 1, mode: 'concurrent' as 'concurrent' | 'sequential' };
  #delay: { ms: number; left: number | undefined } = { ms: 0, left: undefined };
  #drop: { share: number; left: number | undefined } = { share: 0, left: undefined };
  #dropped = 0;
  #batchOrder: DeliveryOrder | undefined;
  #holding = false;

  /** @internal Called by the simulator when controls change the delivery state. */
  onRelease: (order: DeliveryOrder) => void = () => undefined;

  /**
   * Answers API requests with 429 and `Retry-After` (default 1 s): the next `next` requests, or a
   * steady `ratio` of them (deterministic: with 0.5, every second request). `false` turns it off.
   */
  rateLimit(rule: RateLimitRule | false): this {
    if (rule === false) {
      this.#rate = undefined;
      return this;
    }
    const retryAfter = rule.retryAfterSeconds ?? 1;
    if (!Number.isInteger(retryAfter) || retryAfter < 0)
      throw new PaymentsInvalidArgumentError(
        'PaymentsSimulator.controls.rateLimit',
        'retryAfterSeconds',
        SIMULATOR_ARGUMENT_MESSAGES.nonNegativeInteger,
      );
    if ('next' in rule) {
      if (!Number.isInteger(rule.next) || rule.next < 0)
        throw new PaymentsInvalidArgumentError(
          'PaymentsSimulator.controls.rateLimit',
          'next',
          SIMULATOR_ARGUMENT_MESSAGES.nonNegativeInteger,
        );
      this.#rate = { kind: 'next', left: rule.next, retryAfter };
    } else {
      if (!(rule.ratio >= 0 && rule.ratio <= 1))
        throw new PaymentsInvalidArgumentError(
          'PaymentsSimulator.controls.rateLimit',
          'ratio',
          SIMULATOR_ARGUMENT_MESSAGES.ratio,
        );
      this.#rate = { kind: 'ratio', ratio: rule.ratio, seen: 0, retryAfter };
    }
    return this;
  }

  /** Sends every delivery `copies` times (each copy its own WebhookRequest, same event id), at once or one after the other. */
  duplicateDeliveries(copies: number, mode: 'concurrent' | 'sequential' = 'concurrent'): this {
    if (!Number.isInteger(copies) || copies < 1)
      throw new PaymentsInvalidArgumentError(
        'PaymentsSimulator.controls.duplicateDeliveries',
        'copies',
        SIMULATOR_ARGUMENT_MESSAGES.positiveInteger,
      );
    this.#duplicates = { copies, mode };
    return this;
  }

  /**
   * Waits `ms` before the first attempt of every new delivery, or of the next `next` ones only (then
   * no delay again). `delayDeliveries(0)` turns it off. At most 2147483647 ms (Node's longest timer).
   */
  delayDeliveries(ms: number, options: { next?: number } = {}): this {
    if (!isTimerMs(ms))
      throw new PaymentsInvalidArgumentError(
        'PaymentsSimulator.controls.delayDeliveries',
        'ms',
        SIMULATOR_ARGUMENT_MESSAGES.timerMs,
      );
    const next = options.next;
    if (next !== undefined && (!Number.isInteger(next) || next < 0))
      throw new PaymentsInvalidArgumentError(
        'PaymentsSimulator.controls.delayDeliveries',
        'next',
        SIMULATOR_ARGUMENT_MESSAGES.nonNegativeInteger,
      );
    this.#delay = { ms, left: next };
    return this;
  }

  /**
   * Delivers the events of one batch (e.g. `payment_intent.succeeded` + `charge.succeeded` of one
   * confirm) one after the other in this order ('reverse': last event first). `false`: all at once.
   */
  outOfOrder(order: DeliveryOrder | false): this {
    this.#batchOrder = order === false ? undefined : order;
    return this;
  }

  /**
   * Drops new deliveries for good: the endpoint never receives them, no attempt and no retry (an
   * endpoint down past the retry schedule, a route a deploy removed). A number drops that share (0 to
   * 1) of them, drawn from the simulator's `random`; `{ next: n }` drops exactly the next n, then none.
   * `dropped` counts them. For the reconciler (`webhooks.reconcile`).
   */
  dropDeliveries(rule: number | { next: number }): this {
    if (typeof rule === 'object' && rule !== null) {
      if (!Number.isInteger(rule.next) || rule.next < 0)
        throw new PaymentsInvalidArgumentError(
          'PaymentsSimulator.controls.dropDeliveries',
          'next',
          SIMULATOR_ARGUMENT_MESSAGES.nonNegativeInteger,
        );
      this.#drop = { share: 0, left: rule.next };
      return this;
    }
    if (!(rule >= 0 && rule <= 1))
      throw new PaymentsInvalidArgumentError(
        'PaymentsSimulator.controls.dropDeliveries',
        'share',
        SIMULATOR_ARGUMENT_MESSAGES.ratio,
      );
    this.#drop = { share: rule, left: undefined };
    return this;
  }

  /** Deliveries dropped for good by `dropDeliveries` so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** @internal Whether the next delivery is dropped (counted when it is). */
  takeDrop(random: () => number): boolean {
    const drop = this.#drop;
    if (drop.left !== undefined) {
      if (drop.left === 0) return false;
      drop.left -= 1;
    } else if (drop.share === 0 || !(random() < drop.share)) return false;
    this.#dropped += 1;
    return true;
  }

  /** Holds every new delivery until `release()`, to build a backlog. */
  hold(): this {
    this.#holding = true;
    return this;
  }

  /** Stops holding and starts the held deliveries one after the other, in `order` (default 'fifo'). */
  release(order: DeliveryOrder = 'fifo'): this {
    this.#holding = false;
    this.onRelease(order);
    return this;
  }

  /** Turns every control off (held deliveries are released in fifo order). */
  reset(): this {
    this.#rate = undefined;
    this.#duplicates = { copies: 1, mode: 'concurrent' };
    this.#delay = { ms: 0, left: undefined };
    this.#drop = { share: 0, left: undefined };
    this.#batchOrder = undefined;
    if (this.#holding) this.release('fifo');
    return this;
  }

  /** @internal Whether this API request is throttled; returns the Retry-After seconds if so. */
  takeRateLimit(): number | undefined {
    const rate = this.#rate;
    if (rate === undefined) return undefined;
    if (rate.kind === 'next') {
      if (rate.left <= 0) return undefined;
      rate.left -= 1;
      return rate.retryAfter;
    }
    // Deterministic spread: the n-th request is throttled when floor(n * ratio) steps up.
    const before = Math.floor(rate.seen * rate.ratio);
    rate.seen += 1;
    return Math.floor(rate.seen * rate.ratio) > before ? rate.retryAfter : undefined;
  }

  /** @internal */
  get duplicates(): { copies: number; mode: 'concurrent' | 'sequential' } {
    return this.#duplicates;
  }
  /** @internal The delay the next new delivery would get (kept for readers of the older getter). */
  get delayMs(): number {
    return this.#delay.left === 0 ? 0 : this.#delay.ms;
  }
  /** @internal The delay of the next new delivery (counted against `next` when one was given). */
  takeDelay(): number {
    const delay = this.#delay;
    if (delay.left === undefined) return delay.ms;
    if (delay.left === 0) return 0;
    delay.left -= 1;
    return delay.ms;
  }
  /** @internal */
  get batchOrder(): DeliveryOrder | undefined {
    return this.#batchOrder;
  }
  /** @internal */
  get holding(): boolean {
    return this.#holding;
  }
}
