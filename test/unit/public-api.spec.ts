import 'reflect-metadata';
import { beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import ts from 'typescript';

/*
 * The public surface is pinned by API Extractor's reports, checked in under etc/ (one per entry point,
 * `npm run api:check` in CI; `npm run api:report` rewrites them after a change, and review sees the diff).
 * What a report cannot say stays here: the root keeps to what an application writes, the names users'
 * code imports from the root and from `nestjs-payments/testing` stay there, and every value the
 * declarations export exists at runtime.
 */

const root = process.cwd();
const ENTRIES: Array<[entry: string, file: string, load: () => Promise<object>]> = [
  ['nestjs-payments', 'lib/index.ts', () => import('../../lib/index.js')],
  ['nestjs-payments/testing', 'lib/testing/index.ts', () => import('../../lib/testing/index.js')],
  ['nestjs-payments/health', 'lib/health/index.ts', () => import('../../lib/health/index.js')],
  ['nestjs-payments/webhooks', 'lib/webhooks/index.ts', () => import('../../lib/webhooks/index.js')],
  ['nestjs-payments/client', 'lib/client/index.ts', () => import('../../lib/client/index.js')],
  ['nestjs-payments/serverless', 'lib/serverless/index.ts', () => import('../../lib/serverless/index.js')],
  ['nestjs-payments/rabbitmq', 'lib/brokers/rabbitmq/index.ts', () => import('../../lib/brokers/rabbitmq/index.js')],
  ['nestjs-payments/nats', 'lib/brokers/nats/index.ts', () => import('../../lib/brokers/nats/index.js')],
];

/** Names that stay at the root through any redesign: code outside the repository imports them. */
const KEPT_AT_ROOT = [
  'PaymentsModule',
  'PaymentsService',
  'OnPaymentEvent',
  'PaymentEvent',
  'PaymentEventContext',
  'PaymentEventType',
  'PaymentsError',
  'PaymentsApiError',
  'PaymentsAuthenticationError',
  'PaymentsPermissionError',
  'PaymentsRateLimitError',
  'PaymentsConnectionError',
  'PaymentsConfigurationError',
  'hmacVerifier',
  'standardWebhooksVerifier',
  'MemoryIdempotencyStore',
  'RedisIdempotencyStore',
  'PostgresIdempotencyStore',
  'pgTransactionRunner',
  'IdempotencyStore',
  'WebhookVerifier',
];
/** And from `nestjs-payments/testing`. */
const KEPT_IN_TESTING = ['signWebhook', 'createPaymentEvent', 'PaymentsSimulator', 'describeIdempotencyStore'];

const sorted = (names: string[]): string[] => [...names].sort((a, b) => a.localeCompare(b));

interface Exports {
  /** Every exported name, values and types. */
  all: string[];
  /** The names with a runtime value (classes, functions, constants; a type with a value twin counts; not `export type`). */
  values: string[];
}

/** What each entry file exports, as the compiler sees it. */
function compiledExports(): Map<string, Exports> {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const files = ENTRIES.map(([, file]) => path.join(root, file));
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  const exports = new Map<string, Exports>();
  for (const [, file] of ENTRIES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(path.join(root, file))!)!;
    const symbols = checker.getExportsOfModule(module);
    const isValue = (symbol: ts.Symbol): boolean => {
      // `export type { SimulatorControls }`: a class exported as a type only has no runtime export.
      for (let alias: ts.Symbol | undefined = symbol; alias && alias.flags & ts.SymbolFlags.Alias;) {
        if (alias.declarations?.some((declaration) => ts.isTypeOnlyImportOrExportDeclaration(declaration)))
          return false;
        alias = checker.getImmediateAliasedSymbol(alias);
      }
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return (target.flags & ts.SymbolFlags.Value) !== 0;
    };
    exports.set(file, {
      all: sorted(symbols.map((symbol) => symbol.name)),
      values: sorted(symbols.filter(isValue).map((symbol) => symbol.name)),
    });
  }
  return exports;
}

describe('public surface', () => {
  let compiled: Map<string, Exports>;
  beforeAll(() => {
    compiled = compiledExports();
  }, 120_000);

  it.each(ENTRIES)(
    '%s: every value its declarations export exists at runtime, and nothing else',
    async (_entry, file, load) => {
      expect(sorted(Object.keys(await load()))).toEqual(compiled.get(file)!.values);
    },
  );

  it('keeps the root to what an application writes: at most 50 names', () => {
    const names = compiled.get('lib/index.ts')!.all;
    expect({ count: names.length, atMost50: names.length <= 50 }).toEqual({ count: names.length, atMost50: true });
  });

  it('keeps at the root every name code outside the repository imports from it', () => {
    const rootNames = compiled.get('lib/index.ts')!.all;
    expect(KEPT_AT_ROOT.filter((name) => !rootNames.includes(name))).toEqual([]);
  });

  it('keeps in nestjs-payments/testing the names tests outside the repository import from it', () => {
    const testingNames = compiled.get('lib/testing/index.ts')!.values;
    expect(KEPT_IN_TESTING.filter((name) => !testingNames.includes(name))).toEqual([]);
  });
});
