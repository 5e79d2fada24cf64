/**
 * Notices a run of signature failures with no valid delivery in between (`threshold` within
 * `withinMs`): the configured secret then probably is not the endpoint's. Says so at most once per
 * `quietMs`. The line names the option and the usual env var, never a secret.
 */
export class WebhookSecretMismatchDetector {
  #failures: number[] = [];
  #lastWarnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly write: (line: string) => void,
    private readonly now: () => number,
    private readonly threshold = 5,
    private readonly withinMs = 60_000,
    private readonly quietMs = 15 * 60_000,
  ) {}

  /** A delivery passed the signature check: the secret works. */
  valid(): void {
    if (this.#failures.length > 0) this.#failures = [];
  }

  /** A delivery failed the signature check; `route` as served (a function: worked out only for the warning). */
  invalid(route: string | (() => string)): void {
    const now = this.now();
    this.#failures.push(now);
    if (this.#failures.length > this.threshold) this.#failures.shift();
    if (this.#failures.length < this.threshold || now - this.#failures[0]! > this.withinMs) return;
    if (now - this.#lastWarnedAt < this.quietMs) return;
    this.#lastWarnedAt = now;
    this.write(
      `${this.threshold} deliveries in a row to ${typeof route === 'function' ? route() : route} failed the signature check within ${this.withinMs / 1000} s and none was valid: the configured secret probably is not this endpoint's. Check webhooks.verifier secrets (the README reads them from PAYMENTS_WEBHOOK_SECRET) against the endpoint's secret in the dashboard`,
    );
  }
}
