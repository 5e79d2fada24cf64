import { base } from './jest.base.js';

/** `npm run test:redis`: suites that need a real Redis at REDIS_URL (default redis://127.0.0.1:6379). */
export default {
  ...base,
  testMatch: ['<rootDir>/test/integration/**/*.spec.ts'],
  // PostgreSQL suites run with `npm run test:postgres` (jest.postgres.config.js), broker ones with `npm run test:brokers`.
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/integration/postgres/',
    '<rootDir>/test/integration/brokers/',
  ],
  testTimeout: 120000,
};
