import type { Logger } from '@nestjs/common';
import type { PaymentsTelemetry } from '../../telemetry/payments.telemetry.js';
import type { IdempotencyStore } from '../contracts/idempotency-store.interface.js';

/** What happened to a renewal that did not extend the lease. */
export type LeaseRenewalProblem =
  | { kind: 'lost' } // the store said the token no longer owns the claim
  | { kind: 'error'; error: unknown }; // the store call failed; the next tick tries again

/** One claim to keep alive while its handler runs. */
export interface LeaseRenewal {
  /** The store; `renew` is called on it at each tick (read at each call, so a replaced method is used). */
  store: IdempotencyStore;
  /** The run's record and slot, and its owner's token. */
  key: string;
  slot: string;
  token: string;
  /** The lease each renewal asks for (`claimTtlSeconds` in ms). Renewed every third of it. */
  leaseMs: number;
  /** Told once when the lease is lost (renewal then stops), and at each failed store call. */
  onProblem(problem: LeaseRenewalProblem): void;
}

/**
 * Runs `pending` (a handler's promise) while renewing its claim every `leaseMs / 3`, as lease-based
 * systems do, and settles as `pending` does. The timer is cleared on every path (fulfilled, rejected,
 * lease lost) and `unref()`ed, so it never holds the process open; a renewal still in flight when the
 * handler ends is ignored. Without `store.renew` it returns `pending` as it is.
 *
 * Only for handlers that return a promise: a handler that completes at once needs no renewal, and the
 * receiver's synchronous path creates no timer.
 */
export function whileRenewingLease<T>(pending: PromiseLike<T>, renewal: LeaseRenewal): Promise<T> {
  if (typeof renewal.store.renew !== 'function') return Promise.resolve(pending);
  const everyMs = Math.max(1, Math.floor(renewal.leaseMs / 3));
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = true;
  const schedule = (): void => {
    timer = setTimeout(tick, everyMs);
    timer.unref?.();
  };
  const tick = (): void => {
    timer = undefined;
    let renewed: Promise<boolean>;
    try {
      renewed = Promise.resolve(
        renewal.store.renew!(renewal.key, { slot: renewal.slot, token: renewal.token, leaseMs: renewal.leaseMs }),
      );
    } catch (error) {
      renewed = Promise.reject(error as Error);
    }
    renewed.then(
      (extended) => {
        if (!running) return;
        if (extended) return schedule();
        running = false;
        renewal.onProblem({ kind: 'lost' });
      },
      (error: unknown) => {
        if (!running) return;
        renewal.onProblem({ kind: 'error', error });
        schedule();
      },
    );
  };
  const stop = (): void => {
    running = false;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  schedule();
  return Promise.resolve(pending).then(
    (value) => {
      stop();
      return value;
    },
    (error: unknown) => {
      stop();
      throw error;
    },
  );
}

/** Logs and counts a renewal that failed (warn, `payments.store.errors`) or a lease lost while the handler ran (error, `payments.handler.leases_lost`). */
export function reportRenewalProblem(
  problem: LeaseRenewalProblem,
  where: string,
  handlerId: string,
  logger: Pick<Logger, 'warn' | 'error'>,
  telemetry: Pick<PaymentsTelemetry, 'storeError' | 'leaseLost'>,
): void {
  if (problem.kind === 'error') {
    const error = problem.error;
    logger.warn(
      `Could not renew the claim of ${where}: ${error instanceof Error ? `${error.name}: ${error.message}` : typeof error}`,
    );
    telemetry.storeError('renew');
    return;
  }
  logger.error(
    `Lost the claim of ${where} while it ran: a redelivery may run it again (check the store, or raise webhooks.claimTtlSeconds)`,
  );
  telemetry.leaseLost(handlerId);
}
