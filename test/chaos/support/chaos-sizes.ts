/**
 * Sizes and seeds of the chaos suite, from the environment, so that CI runs a fixed size and anyone
 * can rerun a bigger one: `FUZZ_RUNS=100000 CHAOS_PAYMENTS=20000 npm run test:chaos`.
 */

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a whole number >= 1, got ${JSON.stringify(raw)}`);
  return value;
}

/** Fuzz cases in total, split evenly over the Express and Fastify receivers. Default 10000 (CI). */
export const FUZZ_RUNS = positiveInteger('FUZZ_RUNS', 10_000);

/** Seed of every fast-check run; print it with a failure and rerun with `FUZZ_SEED=<seed>`. */
export const FUZZ_SEED = positiveInteger('FUZZ_SEED', 20_260_107);

/** Payments per chaos configuration (inline + memory, queued + Redis), and calls of the 429 storm. Default 2000 (CI). */
export const CHAOS_PAYMENTS = positiveInteger('CHAOS_PAYMENTS', 2_000);

/** Seed of the chaos PRNG (duplicates, order, failures, outages). */
export const CHAOS_SEED = positiveInteger('CHAOS_SEED', 7_2026);

/** The Redis of the queued configuration. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
