import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

const root = process.cwd();
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  type: string;
  types: string;
  typesVersions?: Record<string, Record<string, string[]>>;
  exports: Record<string, { import: Record<string, string>; require: Record<string, string>; default: string }>;
  files: string[];
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Bare specifiers of every import/export/dynamic import in lib/, with the files that use them. */
function bareImports(): Map<string, { file: string; typeOnly: boolean }[]> {
  const found = new Map<string, { file: string; typeOnly: boolean }[]>();
  const pattern = /(?:^|\n)\s*(import|export)(\s+type)?[^'"\n;]*?from\s*'([^']+)'|import\(\s*'([^']+)'\s*\)/g;
  for (const file of sourceFiles(join(root, 'lib'))) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(pattern)) {
      const specifier = match[3] ?? match[4];
      if (specifier.startsWith('.')) continue;
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
      const uses = found.get(name) ?? [];
      uses.push({ file: file.slice(root.length + 1), typeOnly: match[2] !== undefined });
      found.set(name, uses);
    }
  }
  return found;
}

describe('package manifest', () => {
  it('ships one CommonJS build for require and thin ES module wrappers of it for import, each with its types, for every entry point', () => {
    expect(manifest.type).toBe('module'); // the sources; dist/cjs/ carries its own {"type":"commonjs"}
    const subpaths = ['testing', 'health', 'webhooks', 'client', 'serverless', 'rabbitmq', 'nats'];
    expect(Object.keys(manifest.exports)).toEqual(['.', ...subpaths.map((sub) => `./${sub}`), './package.json']);
    for (const entry of ['.', ...subpaths.map((sub) => `./${sub}`)]) {
      const sub = entry === '.' ? '' : `${entry.slice(2)}/`;
      // The broker entries are built from lib/brokers/<broker>/.
      const built = entry === './rabbitmq' || entry === './nats' ? `brokers/${sub}` : sub;
      // `import` gets the ES module wrapper and its ES module declarations (dist/esm/<entry>/index.d.ts
      // re-exports the CommonJS ones), `require` the CommonJS build and its declarations: each module
      // system's types say what it loads (attw, `npm run check:package`).
      expect(manifest.exports[entry]).toEqual({
        import: { types: `./dist/esm/${sub}index.d.ts`, default: `./dist/esm/${sub}index.js` },
        require: { types: `./dist/cjs/${built}index.d.ts`, default: `./dist/cjs/${built}index.js` },
        default: `./dist/cjs/${built}index.js`,
      });
    }
    // TypeScript's node10 resolution reads neither `exports` nor subpaths: `types` and `typesVersions` lead it.
    expect(manifest.types).toBe('./dist/cjs/index.d.ts');
    expect(manifest.typesVersions).toEqual({
      '*': Object.fromEntries(
        subpaths.map((sub) => [
          sub,
          [`./dist/cjs/${sub === 'rabbitmq' || sub === 'nats' ? `brokers/${sub}` : sub}/index.d.ts`],
        ]),
      ),
    });
    expect(manifest.files).toEqual(expect.arrayContaining(['dist/cjs', 'dist/esm']));
  });

  it('ships `npx nestjs-payments` from the CommonJS build: a shebang file of lib/, importing Node built-ins only', () => {
    expect(manifest.bin).toEqual({ 'nestjs-payments': 'dist/cjs/testing/simulator/cli/main.js' });
    expect(manifest.files).toContain('dist/cjs');
    const main = readFileSync(join(root, 'lib/testing/simulator/cli/main.ts'), 'utf8');
    expect(main.startsWith('#!/usr/bin/env node\n')).toBe(true);
    const cliImports = sourceFiles(join(root, 'lib/testing/simulator/cli')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from '([^'.][^']*)'/g)].map((m) => m[1]!),
    );
    expect(cliImports.filter((name) => !name.startsWith('node:'))).toEqual([]);
  });

  it('declares every bare import of lib/ as a dependency or a peer dependency', () => {
    const declared = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ]);
    const undeclared = [...bareImports().keys()].filter(
      (name) => !name.startsWith('node:') && !builtinModules.includes(name) && !declared.has(name),
    );
    expect(undeclared).toEqual([]);
  });

  it('loads optional peers (bullmq, ioredis, pg, drizzle-orm, CLS, OpenTelemetry, terminus, the broker clients and @nestjs/microservices) only lazily or as types, so the module works without them', () => {
    const imports = bareImports();
    const optional = Object.entries(manifest.peerDependenciesMeta ?? {})
      .filter(([, meta]) => meta.optional)
      .map(([name]) => name);
    expect(optional.sort()).toEqual([
      '@nestjs-cls/transactional',
      '@nestjs/microservices',
      '@nestjs/terminus',
      '@opentelemetry/api',
      'amqp-connection-manager',
      'amqplib',
      'bullmq',
      'drizzle-orm',
      'ioredis',
      'nats',
      'nestjs-cls',
      'pg',
    ]);
    for (const name of optional) {
      for (const use of imports.get(name) ?? []) {
        // The `./health` entry point exists to load terminus; the next test keeps it apart from the rest.
        if (name === '@nestjs/terminus' && use.file.startsWith('lib/health/')) continue;
        const text = readFileSync(join(root, use.file), 'utf8');
        const eager = new RegExp(`^\\s*import\\s+(?!type\\b)[^;]*from\\s*'${name}'`, 'm').test(text);
        expect({ file: use.file, eager }).toEqual({ file: use.file, eager: false });
      }
    }
  });

  it('loads axios only on the first API call (as types elsewhere): an instance that only receives webhooks holds none of it', () => {
    const files = [...new Set((bareImports().get('axios') ?? []).map((use) => use.file))].sort();
    expect(files).toEqual(['lib/client/payments-http.connection.ts', 'lib/client/payments-http.transport.ts']);
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      expect({ file, eager: /^\s*import\s+(?!type\b)[^;]*from\s*'axios'/m.test(text) }).toEqual({ file, eager: false });
    }
    expect(readFileSync(join(root, 'lib/client/payments-http.connection.ts'), 'utf8')).toContain("import('axios')");
  });

  it('loads @nestjs/terminus only from lib/health (the ./health entry point), which nothing else in lib/ imports', () => {
    const terminusFiles = (bareImports().get('@nestjs/terminus') ?? []).map((use) => use.file);
    expect(terminusFiles.filter((file) => !file.startsWith('lib/health/'))).toEqual([]);
    const intoHealth = sourceFiles(join(root, 'lib'))
      .map((file) => file.slice(root.length + 1))
      .filter((file) => !file.startsWith('lib/health/'))
      .filter((file) =>
        /from\s*'(\.\.?\/)+(\.\.\/)*health\/|import\(\s*'[^']*\/health\//.test(readFileSync(join(root, file), 'utf8')),
      );
    expect(intoHealth).toEqual([]);
    expect(manifest.exports['./health'].require.default).toBe('./dist/cjs/health/index.js');
  });

  it('keeps every Nest import on a public entry point', () => {
    const deep = [...bareImports().entries()]
      .flatMap(([, uses]) => uses.map((use) => use.file))
      .filter((file) => /from '@nestjs\/(common|core)\//.test(readFileSync(join(root, file), 'utf8')));
    expect(deep).toEqual([]);
  });

  it('pins peer ranges to the major versions CI installs: the dev install, or an app of the consumer matrix', () => {
    const dev = manifest.devDependencies ?? {};
    const consumersDir = join(root, 'test', 'consumers');
    // Majors each consumer app installs (test/consumers/<app>/package.json, run by `npm run test:consumers`).
    const consumerMajors = new Map<string, Set<string>>();
    for (const app of readdirSync(consumersDir)) {
      const file = join(consumersDir, app, 'package.json');
      if (!existsSync(file)) continue;
      const { dependencies = {}, devDependencies = {} } = JSON.parse(readFileSync(file, 'utf8')) as {
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      for (const [name, range] of Object.entries({ ...dependencies, ...devDependencies })) {
        const major = /^[\^~]?(\d+)\./.exec(range)?.[1];
        if (major !== undefined) consumerMajors.set(name, (consumerMajors.get(name) ?? new Set()).add(major));
      }
    }
    for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
      const installed = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      };
      // One caret range per major, joined by ||: no wider than what CI tests.
      expect({ name, range }).toEqual({
        name,
        range: expect.stringMatching(/^\^\d+\.\d+\.\d+( \|\| \^\d+\.\d+\.\d+)*$/),
      });
      const majors = range.split(' || ').map((part) => part.slice(1).split('.')[0]);
      const tested = new Set([installed.version.split('.')[0], ...(consumerMajors.get(name) ?? [])]);
      expect({ name, untested: majors.filter((major) => !tested.has(major)) }).toEqual({ name, untested: [] });
      expect(dev[name]).toBeDefined();
    }
  });

  it('supports the Node versions that load an ES module with require() (CommonJS apps), as the README says', () => {
    const engines = (manifest as { engines?: { node?: string } }).engines;
    expect(engines?.node).toBe('^20.19.0 || ^22.12.0 || >=24.0.0');
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain('Node 20.19+, 22.12+ or 24+');
  });
});
