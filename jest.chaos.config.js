import { base } from './jest.base.js';

/** `npm run test:chaos`: fuzzing, chaos and leak audit (sizes from FUZZ_RUNS / CHAOS_PAYMENTS). */
export default {
  ...base,
  testMatch: ['<rootDir>/test/chaos/**/*.spec.ts'],
  testTimeout: 1800000,
};
