import { base } from './jest.base.js';

/** `npm run test:sim`: the whole-system simulation (test/sim), seeded, on a simulated clock. */
export default {
  ...base,
  testMatch: ['<rootDir>/test/sim/**/*.sim.ts'],
  testTimeout: 600000,
};
