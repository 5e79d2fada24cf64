import { startMerchant, type MerchantProcess } from '../../integration/postgres/support/inbox-apps.js';
import { progress } from './chaos.context.js';
import type { SeededRandom } from './seeded-random.js';

/**
 * `size` merchant processes of `main`, each restarted when it dies (a self-kill or one from outside)
 * until `stop()`, and SIGKILLed from outside every 1.5-3 s while `killing` (only when all are up).
 * Each process gets its own seed (xorshift's first outputs from small, close seeds are tiny and alike).
 */
export class MerchantFleet {
  readonly procs: (MerchantProcess | undefined)[];
  kills = 0;
  timerKills = 0;
  #stopping = false;
  #killTimer: NodeJS.Timeout | undefined;
  readonly #restarts: Promise<void>[] = [];

  constructor(
    private readonly main: string,
    private readonly env: Record<string, string>,
    private readonly random: SeededRandom,
    private readonly label: string,
    size: number,
  ) {
    this.procs = Array.from({ length: size }, () => undefined);
  }

  /** The processes that are up now. */
  live(): MerchantProcess[] {
    return this.procs.filter(
      (p): p is MerchantProcess => p !== undefined && p.child.exitCode === null && p.child.signalCode === null,
    );
  }

  async start(): Promise<void> {
    await Promise.all(this.procs.map((_, i) => this.#spawn(i)));
  }

  /** Starts the random SIGKILLs from outside. */
  startKilling(): void {
    this.#killTimer = setTimeout(
      () => {
        const up = this.live();
        if (up.length === this.procs.length) {
          up[this.random.int(0, up.length - 1)]!.child.kill('SIGKILL');
          this.timerKills += 1;
        }
        this.startKilling();
      },
      this.random.int(1_500, 3_000),
    );
  }

  stopKilling(): void {
    clearTimeout(this.#killTimer);
  }

  /** No more restarts; waits for the pending ones. */
  async stop(): Promise<void> {
    this.stopKilling();
    this.#stopping = true;
    await Promise.all(this.#restarts);
  }

  async #spawn(i: number): Promise<void> {
    for (let tries = 0; tries < 5 && !this.#stopping; tries++) {
      try {
        const proc = await startMerchant(this.main, { ...this.env, SEED: String(this.random.int(1, 0x7fff_ffff)) });
        this.procs[i] = proc;
        void proc.exited.then(() => {
          if (this.#stopping) return;
          this.kills += 1;
          this.#restarts.push(this.#spawn(i));
        });
        return;
      } catch (error) {
        progress(`${this.label}: merchant ${i} failed to start (${tries + 1}/5): ${String(error).slice(0, 300)}`);
      }
    }
  }
}
