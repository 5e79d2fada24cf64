// ESLint flat config: the recommended rules of ESLint and typescript-eslint, without type information
// (a type-aware run costs a full program build per lint; `npm run typecheck` already does that work).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Globals of Node.js scripts (bench, scripts, Jest configs); TypeScript files get theirs from @types/node. */
const nodeGlobals = Object.fromEntries(
  [
    'AbortController',
    'AbortSignal',
    'Buffer',
    'URL',
    'URLSearchParams',
    'TextDecoder',
    'TextEncoder',
    'clearImmediate',
    'clearInterval',
    'clearTimeout',
    'console',
    'fetch',
    'globalThis',
    'performance',
    'process',
    'queueMicrotask',
    'setImmediate',
    'setInterval',
    'setTimeout',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

/** `no-restricted-syntax` entries of lib/: one error base for everything the package throws. */
const oneErrorBase = [
  {
    selector: 'NewExpression[callee.name=/^(Error|TypeError|RangeError|SyntaxError)$/]',
    message:
      'Throw a PaymentsError from lib/errors (PaymentsInvalidArgumentError for a bad argument), with its text in a messages file.',
  },
  {
    selector: 'ClassDeclaration[superClass.name=/^(Error|TypeError|RangeError)$/]',
    message: 'Extend PaymentsError (lib/errors): one error base for everything the package throws.',
  },
];

export default tseslint.config(
  {
    ignores: ['dist/**', 'dist-sample/**', 'coverage/**', '**/node_modules/**', 'bench/results/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: nodeGlobals },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_`-prefixed parameters and destructured leftovers are deliberate (interface shapes, rest omission).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Nest modules and DI markers are empty classes by design (`@Module({...}) class AppModule {}`).
      '@typescript-eslint/no-extraneous-class': 'off',
      // `interface PaymentEventTypeMap extends Derived {}` keeps a derived type open to declaration merging.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Refusing control characters (in keys, header values, paths) is what those patterns are for.
      'no-control-regex': 'off',
      'no-console': 'off',
    },
  },
  {
    // CommonJS configuration files (.dependency-cruiser.cjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...nodeGlobals, module: 'writable', require: 'readonly' } },
  },
  {
    // Tests read loosely typed JSON answers; the public types stay free of `any` (rule on in lib/).
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      // The library itself logs through a named Nest Logger, never the console.
      'no-console': 'error',
      // One error base: everything the package throws is a PaymentsError (lib/errors).
      'no-restricted-syntax': ['error', ...oneErrorBase],
      // Only the public entry points of Nest (its exports map hides the rest).
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@nestjs/*/*'], message: 'Import from @nestjs/common or @nestjs/core only.' }] },
      ],
    },
  },
  {
    // The base class itself.
    files: ['lib/errors/payments.errors.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // The receiver's contracts/ holds declarations only: interfaces, types, tokens, constants (its import
    // rules are in .dependency-cruiser.cjs). Code that runs goes to the folder of the part that runs it
    // (docs/development.md, the receiver's layout). test/unit/deps-graph.spec.ts checks that this fires.
    files: ['lib/webhooks/contracts/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...oneErrorBase,
        {
          selector: 'FunctionDeclaration',
          message:
            'lib/webhooks/contracts holds declarations only: move this function to the folder of the part that runs it.',
        },
        {
          selector: 'ClassDeclaration[declare!=true]',
          message:
            'lib/webhooks/contracts holds declarations only: move this class to the folder of the part that runs it.',
        },
      ],
    },
  },
);
