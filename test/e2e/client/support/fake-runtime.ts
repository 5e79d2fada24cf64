import type { PaymentsRuntime } from '../../../../lib/testing/index.js';

/**
 * A `PaymentsRuntime` whose `sleep` returns at once and records each delay, whose clock only moves
 * when something sleeps, and whose `random()` is fixed: backoff tests are exact and instant.
 */
export class FakeRuntime implements PaymentsRuntime {
  readonly sleeps: number[] = [];
  constructor(
    private clock = Date.parse('2026-01-01T00:00:00Z'),
    private readonly randomValue = 0.5,
  ) {}

  now(): number {
    return this.clock;
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.clock += ms;
  }

  random(): number {
    return this.randomValue;
  }
}
