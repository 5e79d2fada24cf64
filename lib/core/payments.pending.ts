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
