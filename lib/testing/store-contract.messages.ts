/** Texts of the errors `describeIdempotencyStore` throws (the suite's own assertions aside). */
export const STORE_CONTRACT_MESSAGES = {
  noStore: 'must return an IdempotencyStore (or a promise of one); it returned nothing',
  noFramework:
    'is needed when describe, it, beforeEach and afterEach are not globals (run the suite under Jest, Vitest with globals: true or Mocha, or pass them)',
} as const;
