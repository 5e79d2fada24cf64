import { base } from './jest.base.js';

/** `npm run test:postgres`: suites that need a real PostgreSQL at PG_URL (default postgres://postgres@127.0.0.1:5432/postgres). */
export default {
  ...base,
  testMatch: ['<rootDir>/test/integration/postgres/**/*.spec.ts'],
  testTimeout: 60000,
};
