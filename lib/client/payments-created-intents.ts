/** Per-call options of `paymentIntents.create` / `setupIntents.create`. */
export interface PaymentsCreateOptions {
  /**
   * With `webhooks.reconcile: { watch: 'opted-in' }`: watch this intent (retrieve it if its terminal
   * webhook does not come). With `watch: 'all'` (the default) every created intent is watched, and
   * `false` opts this one out.
   */
  reconcile?: boolean;
}

/**
 * Told of every intent created through the client (the reconciler listens). A promise it returns is
 * awaited before `create` answers, so an intent the caller knows of is already watched (a crash right
 * after the answer loses nothing).
 */
export type CreatedIntentListener = (
  kind: 'payment_intent' | 'setup_intent',
  intent: { id: string },
  options: PaymentsCreateOptions,
) => unknown;

/** The listeners of one client; a listener that throws never fails the create call. */
export class CreatedIntentListeners {
  readonly #listeners = new Set<CreatedIntentListener>();

  add(listener: CreatedIntentListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async notify(
    kind: 'payment_intent' | 'setup_intent',
    intent: { id: string },
    options: PaymentsCreateOptions,
  ): Promise<void> {
    for (const listener of this.#listeners) {
      try {
        await listener(kind, intent, options);
      } catch {
        // The intent exists: the merchant's order must go on; the listener logs its own failures.
      }
    }
  }
}
