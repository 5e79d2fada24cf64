import { base } from './jest.base.js';

/** `npm run test:model`: the exhaustive model check of the exactly-once protocol (test/model). */
export default {
  ...base,
  testMatch: ['<rootDir>/test/model/**/*.model.ts'],
  testTimeout: 600000,
};
