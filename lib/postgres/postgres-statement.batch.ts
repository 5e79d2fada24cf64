/** One call waiting for its batch. */
interface Waiting<I, R> {
  readonly input: I;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit for one kind of statement: the calls made in the same turn of the event loop (the
 * deliveries whose bytes arrived together) go to PostgreSQL as one statement over arrays (`unnest`),
 * one round trip instead of one each. The turn ends at `setImmediate`, right after the I/O callbacks
 * that made the calls: a lone call waits no longer than that. With `distinctKeys`, calls whose `key` is
 * already in the batch go in a batch of their own (a multi-row `ON CONFLICT DO UPDATE` may not touch
 * one row twice); a statement that takes its rows one by one in key order takes them all. Batches hold
 * at most `maxSize` calls. `send` resolves to one result per input, in order; when it rejects,
 * every call of the batch rejects with that error, as each would have alone.
 */
export class PostgresStatementBatch<I extends { readonly key: string }, R> {
  #waiting: Waiting<I, R>[] = [];
  #scheduled = false;

  constructor(
    private readonly send: (inputs: readonly I[]) => Promise<readonly R[]>,
    private readonly maxSize: number,
    private readonly distinctKeys = true,
  ) {}

  add(input: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    this.#scheduled = false;
    let batch: Waiting<I, R>[] = [];
    let keys = new Set<string>();
    const later: Waiting<I, R>[] = [];
    for (const call of waiting) {
      if (this.distinctKeys && keys.has(call.input.key)) {
        later.push(call);
        continue;
      }
      batch.push(call);
      keys.add(call.input.key);
      if (batch.length === this.maxSize) {
        this.#sendBatch(batch);
        batch = [];
        keys = new Set();
      }
    }
    if (batch.length > 0) this.#sendBatch(batch);
    // Repeated keys: a later turn, so they run after the first of their key was sent.
    for (const call of later) this.add(call.input).then(call.resolve, call.reject);
  }

  #sendBatch(batch: readonly Waiting<I, R>[]): void {
    let sent: Promise<readonly R[]>;
    try {
      sent = this.send(batch.map((call) => call.input));
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent.then(
      (results) => {
        for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!);
      },
      (error: unknown) => {
        for (const call of batch) call.reject(error);
      },
    );
  }
}
