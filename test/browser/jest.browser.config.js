import { base } from '../../jest.base.js';

/**
 * The browser test of the sample's checkout page (Debian chromium + playwright-core). Not part of
 * `npm test`: run it with
 *   node --experimental-vm-modules node_modules/jest/bin/jest.js --config test/browser/jest.browser.config.js
 * CHROMIUM_PATH overrides /usr/bin/chromium.
 */
export default {
  ...base,
  rootDir: '../..',
  testMatch: ['<rootDir>/test/browser/**/*.browser.ts'],
  testTimeout: 120000,
};
