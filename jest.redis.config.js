import { base } from './jest.base.js';

/** `npm run test:redis`: suites that need a real Redis at REDIS_URL (default redis://127.0.0.1:6379). */
export default {
  ...base,
  testMatch: ['<rootDir>/test/integration/**/*.spec.ts'],
  testTimeout: 120000,
};
