import type { PaymentsSimulator } from '../payments-simulator.js';
import type { SimulatedWebhookAttempt, SimulatedWebhookRequest } from '../payments-simulator.options.js';

type Delivery = SimulatedWebhookRequest & { attempts: SimulatedWebhookAttempt[] };

/** How one attempt was answered: the status code, or why none came. */
export function describeAnswer(attempt: SimulatedWebhookAttempt): string {
  if (attempt.finished_at === null) return 'in flight';
  if (attempt.status_code !== null) return String(attempt.status_code);
  return `no answer (${attempt.error ?? 'unknown'})`;
}

/** One line per delivery for the `deliveries` command: id, event, status, and every answer. */
export function deliveryTable(deliveries: readonly Delivery[], dropped: number): string {
  const lines = deliveries.map((d) => {
    const answers = d.attempts.map(describeAnswer).join(', ') || 'none yet';
    const next = d.next_attempt_at === null ? '' : `, next attempt ${d.next_attempt_at}`;
    return `  ${d.id}  ${d.event}  event ${d.event_id}  ${d.status}  answers: ${answers}${next}`;
  });
  if (lines.length === 0) lines.push('  no deliveries yet');
  lines.push(`  dropped by \`drop\`: ${dropped}`);
  return lines.join('\n');
}

/**
 * Prints what happens while the simulator runs: each event emitted, each attempt answered, each
 * delivery dropped. Polls the simulator's records (every `intervalMs`); the timer never holds the
 * process open.
 */
export class DeliveryLog {
  readonly #seenEvents = new Set<string>();
  readonly #seenAttempts = new Set<string>();
  #dropped = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly simulator: PaymentsSimulator,
    private readonly print: (line: string) => void,
  ) {}

  start(intervalMs = 100): void {
    this.#timer = setInterval(() => this.flush(), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Prints everything new since the last call. */
  flush(): void {
    for (const event of this.simulator.events()) {
      if (this.#seenEvents.has(event.id)) continue;
      this.#seenEvents.add(event.id);
      const data = event.data as { payment_intent?: { id: string }; setup_intent?: { id: string } };
      const intent = data.payment_intent ?? data.setup_intent;
      this.print(`--> ${event.event}  event ${event.id}${intent === undefined ? '' : `  intent ${intent.id}`}`);
    }
    const dropped = this.simulator.controls.dropped;
    if (dropped > this.#dropped) {
      this.print(`  x dropped ${dropped - this.#dropped} delivery(ies) for good (drop control)`);
      this.#dropped = dropped;
    }
    for (const delivery of this.simulator.webhookRequests()) {
      for (const attempt of delivery.attempts) {
        if (attempt.finished_at === null || this.#seenAttempts.has(attempt.id)) continue;
        this.#seenAttempts.add(attempt.id);
        const retry = delivery.status === 'scheduled' ? `, retry at ${delivery.next_attempt_at}` : '';
        this.print(
          `<-- [${describeAnswer(attempt)}] ${delivery.event}  delivery ${delivery.id}  attempt ${attempt.attempt}${retry}`,
        );
      }
    }
  }
}
