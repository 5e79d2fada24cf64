import { Injectable } from '@nestjs/common';
import { leakAudit } from '../support/leak-audit.js';
import type { SeededRandom } from '../support/seeded-random.js';

/** One (event id, handler) pair: how often it was invoked, failed on purpose, and completed its work. */
export interface HandlerEffect {
  invoked: number;
  injectedFailures: number;
  completed: number;
}

/** The handler failure the chaos suite injects (10% of handler calls). */
export class InjectedHandlerFailure extends Error {
  override readonly name = 'InjectedHandlerFailure';
}

/**
 * Counts the side effects of every handler per (event id, handler), and injects failures: each
 * handler call draws from a seeded PRNG and throws `InjectedHandlerFailure` before doing any work with
 * probability `failureRate`. "Completed" is counted only when the handler's work is done.
 */
@Injectable()
export class HandlerEffectsLedger {
  readonly #effects = new Map<string, HandlerEffect>();
  injectedFailures = 0;
  /** Errors a handler met that were not injected (a retrieve that failed...): must stay 0. */
  readonly unexpectedErrors: unknown[] = [];

  constructor(
    private readonly random: SeededRandom,
    private readonly failureRate: number,
  ) {}

  /** Called first by every handler: counts the call and maybe fails it. */
  begin(eventId: string, handler: string): void {
    const effect = this.#entry(eventId, handler);
    effect.invoked += 1;
    if (this.random.chance(this.failureRate)) {
      effect.injectedFailures += 1;
      this.injectedFailures += 1;
      const failure = new InjectedHandlerFailure(`injected failure of ${handler} for event ${eventId}`);
      leakAudit.scanError(failure, 'injected handler failure');
      throw failure;
    }
  }

  /** Called last by every handler, once its work is done. */
  complete(eventId: string, handler: string): void {
    this.#entry(eventId, handler).completed += 1;
  }

  /** Records an error a handler met that the suite did not inject (the handler then rethrows it). */
  unexpected(error: unknown): void {
    if (!(error instanceof InjectedHandlerFailure)) this.unexpectedErrors.push(error);
  }

  get(eventId: string, handler: string): HandlerEffect | undefined {
    return this.#effects.get(`${eventId} ${handler}`);
  }

  /** Every pair seen, as [eventId, handler, effect]. */
  *entries(): IterableIterator<[string, string, HandlerEffect]> {
    for (const [key, effect] of this.#effects) {
      const space = key.indexOf(' ');
      yield [key.slice(0, space), key.slice(space + 1), effect];
    }
  }

  #entry(eventId: string, handler: string): HandlerEffect {
    const key = `${eventId} ${handler}`;
    let effect = this.#effects.get(key);
    if (!effect) {
      effect = { invoked: 0, injectedFailures: 0, completed: 0 };
      this.#effects.set(key, effect);
    }
    return effect;
  }
}
