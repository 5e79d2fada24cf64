import { base } from './jest.base.js';

/** `npm test`: unit, e2e and type-level suites. Needs no Redis. */
export default {
  ...base,
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  // test/consumers/: the consumer apps' own tests, run by their own runners (`npm run test:consumers`).
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/integration/',
    '<rootDir>/test/chaos/',
    '<rootDir>/test/consumers/',
  ],
};
