// Shared Jest settings: native ESM (Nest 12 is ESM-only), ts-jest in ESM mode,
// and a mapper that strips the `.js` suffix NodeNext requires on relative imports.
export const base = {
  testEnvironment: 'node',
  rootDir: '.',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  testTimeout: 30000,
};
