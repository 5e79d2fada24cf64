import { base } from './jest.base.js';

/** `npm test`: unit, e2e and type-level suites. Needs no Redis. */
export default {
  ...base,
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/integration/', '<rootDir>/test/chaos/'],
};
