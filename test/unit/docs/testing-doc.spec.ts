import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { CLI_COMMANDS_HELP } from '../../../lib/testing/simulator/cli/cli.messages.js';
import { SimulatorControls } from '../../../lib/testing/simulator/simulator-controls.js';
import { CliProcess } from '../../e2e/testing/simulator/cli/cli-process.fixture.js';
import { transpileToCache, type TranspiledTree } from '../../fixtures/transpile.fixture.js';

/*
 * docs/testing.md runs as written (issue 32, item 3): every `ts` block is read from the page and run as
 * a spec file in a process of its own (lib/ transpiled; `nestjs-payments*` pointed at it; './app.module'
 * and './fulfilment' are the README's quick start as test/consumers/shared/quick-start/ keeps it), with
 * `it` and `expect` (Jest's own `expect` package) as globals. The shell block is run as a command, and
 * its printed lines must be the ones the page shows.
 */
const PAGE = readFileSync(join(process.cwd(), 'docs/testing.md'), 'utf8');
const blocks = (lang: string): string[] =>
  [...PAGE.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
const TS_BLOCKS = blocks('ts');

/** Runs the spec file given as argv[2]: its `it`s in order; prints one JSON line of results. */
const RUNNER = `
import 'reflect-metadata';
import { expect } from 'expect';
const tests: Array<[string, () => unknown]> = [];
Object.assign(globalThis, { expect, it: (name: string, fn: () => unknown) => tests.push([name, fn]) });
await import(process.argv[2]!);
const results: Array<{ name: string; error?: string }> = [];
for (const [name, fn] of tests) {
  try {
    await fn();
    results.push({ name });
  } catch (error) {
    results.push({ name, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
}
process.stdout.write(JSON.stringify(results) + '\\n');
process.exit(0);
`;

describe('docs/testing.md', () => {
  let tree: TranspiledTree;
  let lib: string;
  const pointAtLib = (code: string): string =>
    code
      .replace(/from 'nestjs-payments'/g, `from '${lib}/index.js'`)
      .replace(/from 'nestjs-payments\/(testing|webhooks)'/g, `from '${lib}/$1/index.js'`)
      .replace(/from '\.\/(app\.module|fulfilment)'/g, "from './$1.js'");
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PAYMENTS_')));

  beforeAll(() => {
    tree = transpileToCache('payments-docs-testing', ['lib']);
    lib = join(tree.dir, 'lib');
    for (const file of ['app.module.ts', 'fulfilment.ts']) {
      const source = readFileSync(join(process.cwd(), 'test/consumers/shared/quick-start', file), 'utf8');
      tree.add(`docs/testing/${file}`, pointAtLib(source));
    }
  });
  afterAll(() => tree?.remove());

  it('has the four spec blocks: a handler, the e2e test with the README AppModule, a reconciled order, late events', () => {
    // Every fenced block is one this test runs (ts, sh) or compares with the output (text).
    expect([...PAGE.matchAll(/^```(\w+)\n/gm)].map((m) => m[1])).toEqual(['ts', 'ts', 'ts', 'ts', 'sh', 'text']);
    expect(TS_BLOCKS).toHaveLength(4);
    expect(TS_BLOCKS[1]).toContain("import { AppModule } from './app.module'");
    expect(TS_BLOCKS[1]).not.toContain('DeferredVerifier');
    expect(TS_BLOCKS[2]).toContain('PaymentsReconciler');
    expect(TS_BLOCKS[2]).toContain('.sweep()');
    expect(TS_BLOCKS[3]).toContain('{ late: true }');
  });

  it.each(TS_BLOCKS.map((block, i) => [i + 1, block]))(
    'block %i runs as written, every test passing',
    async (i, block) => {
      const spec = tree.add(`docs/testing/block-${String(i)}.ts`, pointAtLib(block as string));
      const runner = tree.add('docs/testing/run-spec.ts', RUNNER);
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [runner, spec], {
          cwd: tree.dir,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}\n${out}`))));
      });
      const results = JSON.parse(output.trim().split('\n').pop()!) as Array<{ name: string; error?: string }>;
      expect(results.length).toBeGreaterThan(0);
      expect(results.filter((r) => r.error !== undefined)).toEqual([]);
    },
    90_000,
  );

  it('its spec blocks compile under `strict` with the repository tsconfig (handlers and all)', () => {
    // Typed copies beside the transpiled tree, pointed at lib/'s TypeScript and the quick-start sources.
    const dir = join(tree.dir, 'typed');
    mkdirSync(dir, { recursive: true });
    const repo = process.cwd();
    const toLib = (code: string) =>
      code
        .replace(/from 'nestjs-payments'/g, `from '${repo}/lib/index.js'`)
        .replace(/from 'nestjs-payments\/(testing|webhooks)'/g, `from '${repo}/lib/$1/index.js'`);
    // The quick start as an ES module app compiles it (relative imports with `.js`, as the consumer matrix does).
    for (const name of ['app.module', 'fulfilment']) {
      const source = readFileSync(join(repo, 'test/consumers/shared/quick-start', `${name}.ts`), 'utf8');
      writeFileSync(join(dir, `${name}.ts`), toLib(source).replace(/from '\.\/(\w[\w.-]*)'/g, "from './$1.js'"));
    }
    const files = TS_BLOCKS.map((block, i) => {
      const file = join(dir, `block-${i + 1}.ts`);
      const code = toLib(block).replace(/from '\.\/(app\.module|fulfilment)'/g, "from './$1.js'");
      writeFileSync(file, `${code}\nexport {};\n`);
      return file;
    });
    const config = ts.getParsedCommandLineOfConfigFile(
      join(repo, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: () => undefined,
      },
    )!;
    const options: ts.CompilerOptions = {
      ...config.options,
      noEmit: true,
      rootDir: undefined,
      paths: { 'nestjs-payments': [`${repo}/lib/index.ts`], 'nestjs-payments/*': [`${repo}/lib/*/index.ts`] },
    };
    expect(options.strict).toBe(true);
    const program = ts.createProgram(files, options);
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(errors).toEqual([]);
  }, 120_000);

  it('the controls table names every control the simulator has', () => {
    const table = /\| control \| effect \|\n([\s\S]*?)\n\n/.exec(PAGE)![1]!;
    const internal = new Set([
      'constructor',
      'takeDrop',
      'takeDelay',
      'takeRateLimit',
      'delayMs',
      'duplicates',
      'batchOrder',
      'holding',
    ]);
    const controls = Object.getOwnPropertyNames(SimulatorControls.prototype).filter((name) => !internal.has(name));
    expect(controls).toEqual(expect.arrayContaining(['dropDeliveries', 'delayDeliveries', 'dropped', 'hold', 'reset']));
    for (const name of controls) expect(table).toMatch(new RegExp('`' + name + '[`(]'));
  });

  it("the CLI's commands table names every command of its `help`", () => {
    const table = /\| command \| what \|\n([\s\S]*?)\n\n/.exec(PAGE)![1]!;
    const commands = [...CLI_COMMANDS_HELP.matchAll(/^ {2}([\w-]+)(?: \| ([\w-]+))?/gm)].flatMap((m) =>
      m.slice(1).filter(Boolean),
    );
    expect(commands).toEqual(
      expect.arrayContaining([
        'pay',
        'trigger',
        'late',
        'drop',
        'delay',
        'release',
        'out-of-order',
        'resend',
        'deliveries',
        'quit',
      ]),
    );
    for (const command of commands) expect(table).toMatch(new RegExp('`' + command + '[` ]'));
  });

  it('the shell block starts the CLI, which prints the lines the page shows; Ctrl-C stops it', async () => {
    const [shell] = blocks('sh');
    const [output] = blocks('text');
    const args = shell!.trim().split(/\s+/);
    expect(args.slice(0, 3)).toEqual(['npx', 'nestjs-payments', 'simulator']);
    // The page's command as written, plus --port 0: 4010 may be taken on a shared machine.
    const cli = new CliProcess(join(lib, 'testing/simulator/cli/main.js'), [...args.slice(2), '--port', '0']);
    try {
      await cli.waitFor(/^Ready\./m);
      const shown = output!
        .trimEnd()
        .split('\n')
        .map((line) =>
          line
            .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
            .replace(/127\\\.0\\\.0\\\.1:4010/g, '127\\.0\\.0\\.1:\\d+')
            .replace(/(sk_test_|whsec_)\\\.\\\.\\\./g, '$1\\S+')
            .replace(/<id>/g, '[0-9a-f-]{36}'),
        );
      expect(cli.stdout).toMatch(new RegExp('^' + shown.join('\\n') + '\\n'));
      cli.child.kill('SIGINT');
      expect(await cli.exited).toEqual({ code: 0, signal: null });
    } finally {
      cli.kill();
    }
  }, 60_000);
});
