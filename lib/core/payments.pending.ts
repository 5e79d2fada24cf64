/** A value now, or a promise of it: what the receiver's fast path returns, so that work done at once costs no promise. */
export type Pending<T> = T | PromiseLike<T>;

/** Whether `value` is a promise (or any thenable) rather than a value. */
export function isPromiseLike<T>(value: Pending<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** The promise of a `Pending` call: its value or its promise, a synchronous exception as a rejection. */
export function toPromise<T>(fn: () => Pending<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/**
 * Calls `fn`, then hands its outcome to `onValue` or `onError`: at once when `fn` answered a value (no
 * promise, no microtask: the in-memory store's path), once the promise settles otherwise. A synchronous
 * throw counts as an error. The one execution path of the receiver, for synchronous and asynchronous
 * stores and handlers alike.
 *
 * @example settle(() => store.claim(key, leaseMs), (claim) => run(claim), (error) => unavailable(error))
 */
export function settle<T, R>(
  fn: () => Pending<T>,
  onValue: (value: T) => Pending<R>,
  onError: (error: unknown) => Pending<R>,
): Pending<R> {
  let value: Pending<T>;
  try {
    value = fn();
  } catch (error) {
    return onError(error);
  }
  if (value instanceof PendingRejection) return onError(value.error);
  return isPromiseLike(value) ? value.then(onValue, onError) : onValue(value);
}

/**
 * A failure known at once (the in-memory store is full): to `await` and `.then` a rejected promise
 * like any other (made when first asked for), while `settle` takes the error without one, so the
 * receiver answers it on its synchronous path.
 */
export class PendingRejection<T = never> implements PromiseLike<T> {
  constructor(readonly error: unknown) {}

  then<A = T, B = never>(
    onValue?: ((value: T) => A | PromiseLike<A>) | null,
    onError?: ((error: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return Promise.reject(this.error).then(onValue, onError);
  }
}
