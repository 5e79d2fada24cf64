import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/*
 * The import rules of lib/ live in .dependency-cruiser.cjs (`npm run deps:check`, in CI). Each test
 * below builds a small tree that breaks one rule and checks that dependency-cruiser reports it under
 * that rule's name, so that a rule whose pattern stops matching fails here instead of passing quietly.
 */

const repo = process.cwd();
const depcruise = join(repo, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const config = join(repo, '.dependency-cruiser.cjs');
const trees: string[] = [];

/** A tree with `lib/` holding `files` (path under lib/ -> source). */
function treeOf(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'deps-check-'));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, 'lib', path, '..'), { recursive: true });
    writeFileSync(join(root, 'lib', path), text);
  }
  return root;
}

interface Violation {
  rule: string;
  from: string;
  to: string;
  cycle?: string[];
}

/**
 * dependency-cruiser over `<root>/lib` of every tree, with the repository's configuration, in one child
 * process (its programmatic API: one start-up instead of one per tree): what it reports for each.
 */
function cruiseAll(roots: string[]): Map<string, Violation[]> {
  const program = `
    import { cruise } from 'dependency-cruiser';
    import extractOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
    const options = await extractOptions(process.argv[1]);
    const reports = {};
    for (const root of process.argv.slice(2)) {
      process.chdir(root);
      const result = await cruise(['lib'], { ...options, outputType: 'json' });
      reports[root] = JSON.parse(result.output).summary.violations;
    }
    process.stdout.write(JSON.stringify(reports));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', program, config, ...roots], {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`dependency-cruiser failed (${result.status}): ${result.stderr}`);
  const reports = JSON.parse(result.stdout) as Record<
    string,
    Array<{ rule: { name: string }; from: string; to: string; cycle?: Array<{ name: string }> }>
  >;
  return new Map(
    Object.entries(reports).map(([root, violations]) => [
      root,
      violations.map((violation) => ({
        rule: violation.rule.name,
        from: violation.from,
        to: violation.to,
        ...(violation.cycle ? { cycle: violation.cycle.map((step) => step.name) } : {}),
      })),
    ]),
  );
}

/** The rule names reported, once each, sorted. */
const rulesOf = (violations: Violation[]): string[] => [...new Set(violations.map((v) => v.rule))].sort();
const lines = (violations: Violation[]): string[] =>
  violations.map(({ rule, from, to }) => `${rule}: ${from} -> ${to}`);
const exported = (name: string): string => `export const ${name} = 1;\n`;

/** The receiver's seam, as the layout wants it: plug-ins share contracts/, log/ and support/, the root wires. */
const SEAM = {
  'webhooks/contracts/plugin.ts': 'export interface Plugin { name: string }\n',
  'webhooks/log/logger.ts':
    "import type { Plugin } from '../contracts/plugin.js';\nexport const logger = (p: Plugin) => p;\n",
  'webhooks/support/notify.ts':
    "import type { Plugin } from '../contracts/plugin.js';\nexport const notify = (p: Plugin) => p.name;\n",
  'webhooks/transactional/inbox.ts':
    "import type { Plugin } from '../contracts/plugin.js';\nimport { logger } from '../log/logger.js';\nimport { notify } from '../support/notify.js';\nimport { sql } from './inbox.sql.js';\nexport const inbox: Plugin = { name: notify(logger({ name: sql })) };\n",
  'webhooks/transactional/inbox.sql.ts': "export const sql = 'inbox';\n",
  'webhooks/dispatch/dispatcher.ts':
    "import type { Plugin } from '../contracts/plugin.js';\nexport const run = (p: Plugin[]) => p.length;\n",
  'webhooks/payments-webhooks.module.ts':
    "import { inbox } from './transactional/inbox.js';\nimport { run } from './dispatch/dispatcher.js';\nexport const wired = run([inbox]);\n",
};

/** One small tree per case (path under lib/ -> source), each breaking one rule or keeping them all. */
const TREES = {
  typeOnlyCycle: {
    'core/a.ts': "import type { B } from './b.js';\nexport const a = (b: B): B => b;\n",
    'core/b.ts': "import { a } from './a.js';\nexport type B = number;\nexport const b = a;\n",
  },
  longCycle: {
    'core/a.ts': "export { b } from './b.js';\nexport const a = 1;\n",
    'core/b.ts': "import { c } from './inner/index.js';\nexport const b = c;\n",
    'core/inner/index.ts': "export type { A } from '../c.js';\nexport const c = 3;\n",
    'core/c.ts': "import { a } from './a.js';\nexport type A = typeof a;\n",
  },
  oneDirection: {
    'core/a.ts': "import type { B } from './b.js';\nexport const a = (b: B): B => b;\n",
    'core/b.ts': 'export type B = number;\n',
  },
  areasUpward: {
    'errors/e.ts': "import { c } from '../client/c.js';\nexport const e = c;\n",
    'client/c.ts': exported('c'),
    'testing/t.ts': "import { h } from '../health/h.js';\nexport const t = h;\n",
    'health/h.ts': "import { t2 } from '../testing/t2.js';\nexport const h = t2;\n",
    'testing/t2.ts': exported('t2'),
    'webhooks/w.ts': "import { root } from '../payments.module.js';\nexport const w = root;\n",
    'payments.module.ts': "import { w2 } from './webhooks/w2.js';\nexport const root = w2;\n",
    'webhooks/w2.ts': exported('w2'),
  },
  areasDownward: {
    'core/k.ts': exported('k'),
    'errors/e.ts': "import { k } from '../core/k.js';\nexport const e = k;\n",
    'client/c.ts': "import { e } from '../errors/e.js';\nexport const c = e;\n",
    'webhooks/w.ts': "import { c } from '../client/c.js';\nexport const w = c;\n",
    'testing/t.ts': "import { w } from '../webhooks/w.js';\nexport const t = w;\n",
    'index.ts': "export { t } from './testing/t.js';\n",
  },
  unlistedArea: {
    'webhooks/w.ts': "import { s } from '../store/s.js';\nexport const w = s;\n",
    'store/s.ts': "import { k } from '../core/k.js';\nexport const s = k;\n",
    'core/k.ts': exported('k'),
  },
  coreImportsErrors: {
    'core/k.ts':
      "import { createHash } from 'node:crypto';\nimport { e } from '../errors/e.js';\nexport const k = [e, createHash];\n",
    'errors/e.ts': exported('e'),
  },
  clientImportsReceiver: {
    'client/c.ts': "import type { W } from '../webhooks/contracts/w.js';\nexport const c = (w: W) => w;\n",
    'webhooks/contracts/w.ts': 'export type W = string;\n',
  },
  postgresImportsTelemetry: {
    'postgres/sql.ts':
      "import { k } from '../core/k.js';\nimport { e } from '../errors/e.js';\nimport { t } from '../telemetry/t.js';\nexport const sql = [k, e, t];\n",
    'core/k.ts': exported('k'),
    'errors/e.ts': exported('e'),
    'telemetry/t.ts': exported('t'),
  },
  seam: SEAM,
  dispatcherImportsPlugIn: {
    ...SEAM,
    'webhooks/dispatch/dispatcher.ts':
      "import { inbox } from '../transactional/inbox.js';\nexport const run = () => inbox;\n",
  },
  plugInImportsOthers: {
    ...SEAM,
    'webhooks/stores/store.ts':
      "import { inbox } from '../transactional/inbox.js';\nimport { run } from '../dispatch/dispatcher.js';\nexport const store = [inbox, run];\n",
  },
  contractsAndSupportImport: {
    ...SEAM,
    'webhooks/contracts/options.ts':
      "import type { notify } from '../support/notify.js';\nexport type Options = typeof notify;\n",
    'webhooks/support/route.ts': "import { run } from '../dispatch/dispatcher.js';\nexport const route = run;\n",
  },
  logImportsDispatcher: {
    ...SEAM,
    'webhooks/log/sampler.ts': "import { run } from '../dispatch/dispatcher.js';\nexport const sampler = run;\n",
  },
  arrowBackUp: {
    ...SEAM,
    'webhooks/payments-webhooks.values.ts': exported('values'),
    'webhooks/http/route.ts':
      "import { values } from '../payments-webhooks.values.js';\nexport const route = values;\n",
  },
  receiverFolderCycle: {
    'webhooks/dispatch/dispatcher.ts':
      "import { registry } from '../handlers/registry.js';\nexport const d = registry;\n",
    'webhooks/handlers/registry.ts': exported('registry'),
    'webhooks/handlers/explorer.ts': "import { route } from '../http/route.js';\nexport const explorer = route;\n",
    'webhooks/http/route.ts': exported('route'),
    'webhooks/http/checks.ts': "import { lease } from '../dispatch/lease.js';\nexport const checks = lease;\n",
    'webhooks/dispatch/lease.ts': exported('lease'),
  },
  unresolvable: { 'core/k.ts': "import { x } from './missing.js';\nexport const k = x;\n" },
};

describe('deps:check (dependency-cruiser, .dependency-cruiser.cjs)', () => {
  const roots = new Map<keyof typeof TREES, string>();
  let reports: Map<string, Violation[]>;
  const reported = (tree: keyof typeof TREES): Violation[] => reports.get(roots.get(tree)!)!;

  beforeAll(() => {
    for (const [name, files] of Object.entries(TREES)) roots.set(name as keyof typeof TREES, treeOf(files));
    reports = cruiseAll([...roots.values()]);
  }, 60_000);

  afterAll(() => {
    for (const root of trees) rmSync(root, { recursive: true, force: true });
  });

  it('passes on this repository: the command CI runs exits 0', () => {
    const result = spawnSync(process.execPath, [depcruise, 'lib', '--config', config], { cwd: repo, encoding: 'utf8' });
    expect(result.stdout).toContain('no dependency violations found');
    expect(result.status).toBe(0);
  });

  it('exits non-zero when a rule is broken (the CI step fails)', () => {
    const result = spawnSync(process.execPath, [depcruise, 'lib', '--config', config], {
      cwd: roots.get('typeOnlyCycle'),
      encoding: 'utf8',
    });
    expect(result.stdout).toContain('error no-file-cycle');
    expect(result.status).not.toBe(0);
  });

  it('no-file-cycle: a cycle between two files of one folder, even when one side imports only types', () => {
    expect(reported('typeOnlyCycle')).toEqual([
      { rule: 'no-file-cycle', from: 'lib/core/a.ts', to: 'lib/core/b.ts', cycle: ['lib/core/b.ts', 'lib/core/a.ts'] },
    ]);
  });

  it('no-file-cycle: a longer cycle through a re-export, a type-only re-export and a folder index', () => {
    const violations = reported('longCycle');
    expect(rulesOf(violations)).toEqual(['no-file-cycle']);
    expect(violations.find((v) => v.from === 'lib/core/a.ts')?.cycle).toEqual([
      'lib/core/b.ts',
      'lib/core/inner/index.ts',
      'lib/core/c.ts',
      'lib/core/a.ts',
    ]);
  });

  it('passes a tree whose files import each other in one direction only', () => {
    expect(reported('oneDirection')).toEqual([]);
  });

  it('area-layers: an area importing one above it or beside it (a cycle in the making), or the wiring at the root of lib/', () => {
    expect(lines(reported('areasUpward').filter((v) => v.rule === 'area-layers'))).toEqual([
      'area-layers: lib/errors/e.ts -> lib/client/c.ts',
      'area-layers: lib/health/h.ts -> lib/testing/t2.ts',
      'area-layers: lib/testing/t.ts -> lib/health/h.ts',
      'area-layers: lib/webhooks/w.ts -> lib/payments.module.ts',
    ]);
  });

  it('area-layers: an area may import the areas below it, and the root of lib/ any area', () => {
    expect(reported('areasDownward')).toEqual([]);
  });

  it('area-unlisted: a new folder of lib/ not placed in LAYERS, importing or imported', () => {
    expect(lines(reported('unlistedArea').filter((v) => v.rule === 'area-unlisted'))).toEqual([
      'area-unlisted: lib/store/s.ts -> lib/core/k.ts',
      'area-unlisted: lib/webhooks/w.ts -> lib/store/s.ts',
    ]);
  });

  it('core-imports-nothing: lib/core importing another part of the library (packages and Node built-ins pass)', () => {
    expect(reported('coreImportsErrors').filter((v) => v.rule === 'core-imports-nothing')).toEqual([
      { rule: 'core-imports-nothing', from: 'lib/core/k.ts', to: 'lib/errors/e.ts' },
    ]);
  });

  it('client-never-imports-receiver: lib/client importing lib/webhooks, even a type', () => {
    expect(reported('clientImportsReceiver').filter((v) => v.rule === 'client-never-imports-receiver')).toEqual([
      { rule: 'client-never-imports-receiver', from: 'lib/client/c.ts', to: 'lib/webhooks/contracts/w.ts' },
    ]);
  });

  it('postgres-imports-core-errors: lib/postgres importing anything but core and errors', () => {
    expect(reported('postgresImportsTelemetry')).toEqual([
      { rule: 'postgres-imports-core-errors', from: 'lib/postgres/sql.ts', to: 'lib/telemetry/t.ts' },
    ]);
  });

  it('passes the receiver laid out as its rules want', () => {
    expect(reported('seam')).toEqual([]);
  });

  it('receiver-dispatcher-imports-no-plug-in: the dispatcher importing a plug-in', () => {
    expect(lines(reported('dispatcherImportsPlugIn'))).toEqual([
      'receiver-dispatcher-imports-no-plug-in: lib/webhooks/dispatch/dispatcher.ts -> lib/webhooks/transactional/inbox.ts',
    ]);
  });

  it('receiver-plug-ins-import-contracts-support: a plug-in importing another plug-in or the dispatcher', () => {
    expect(lines(reported('plugInImportsOthers'))).toEqual([
      'receiver-plug-ins-import-contracts-support: lib/webhooks/stores/store.ts -> lib/webhooks/dispatch/dispatcher.ts',
      'receiver-plug-ins-import-contracts-support: lib/webhooks/stores/store.ts -> lib/webhooks/transactional/inbox.ts',
    ]);
  });

  it('receiver-contracts-import-nothing and receiver-support-imports-contracts', () => {
    const violations = reported('contractsAndSupportImport');
    expect(lines(violations.filter((v) => v.rule !== 'receiver-no-folder-cycle'))).toEqual([
      'receiver-contracts-import-nothing: lib/webhooks/contracts/options.ts -> lib/webhooks/support/notify.ts',
      'receiver-support-imports-contracts: lib/webhooks/support/route.ts -> lib/webhooks/dispatch/dispatcher.ts',
    ]);
    // Both imports also close circles between folders (contracts <-> support, support -> dispatch -> contracts).
    expect(rulesOf(violations)).toContain('receiver-no-folder-cycle');
  });

  it('receiver-log-imports-contracts: the logger and log sampler importing a part of the receiver', () => {
    expect(lines(reported('logImportsDispatcher'))).toEqual([
      'receiver-log-imports-contracts: lib/webhooks/log/sampler.ts -> lib/webhooks/dispatch/dispatcher.ts',
    ]);
  });

  it('receiver-no-arrow-back-up: a subfolder of lib/webhooks importing its root (the wiring)', () => {
    expect(lines(reported('arrowBackUp'))).toEqual([
      'receiver-no-arrow-back-up: lib/webhooks/http/route.ts -> lib/webhooks/payments-webhooks.values.ts',
    ]);
  });

  it('receiver-no-folder-cycle: three subfolders of lib/webhooks in a circle, with no file cycle', () => {
    const violations = reported('receiverFolderCycle');
    expect(rulesOf(violations)).toEqual(['receiver-no-folder-cycle']);
    expect(violations.map((v) => v.from).sort()).toEqual([
      'lib/webhooks/dispatch',
      'lib/webhooks/handlers',
      'lib/webhooks/http',
    ]);
  });

  it('not-to-unresolvable: an import of lib/ that resolves to no file', () => {
    expect(reported('unresolvable').filter((v) => v.rule === 'not-to-unresolvable')).toEqual([
      { rule: 'not-to-unresolvable', from: 'lib/core/k.ts', to: './missing.js' },
    ]);
  });

  it('contracts/ holds declarations only: ESLint refuses a function or class body there (eslint.config.js)', () => {
    const lint = (text: string) =>
      spawnSync(
        process.execPath,
        [
          join(repo, 'node_modules', 'eslint', 'bin', 'eslint.js'),
          '--stdin',
          '--stdin-filename',
          'lib/webhooks/contracts/util.ts',
        ],
        { cwd: repo, input: text, encoding: 'utf8' },
      );
    const runtime = lint('export function helper(): number {\n  return 1;\n}\nexport class Helper {}\n');
    expect(runtime.stdout.match(/lib\/webhooks\/contracts holds declarations only/g)).toHaveLength(2);
    expect(runtime.status).toBe(1);
    const declarations = lint(
      "export interface Store { claim(): void }\nexport declare function helper(): number;\nexport const TOKEN = 'token';\n",
    );
    expect(declarations.stdout).toBe('');
    expect(declarations.status).toBe(0);
  });
});
