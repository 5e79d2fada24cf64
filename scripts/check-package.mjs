#!/usr/bin/env node
// `npm run check:package` (CI): the packed tarball, as a registry would ship it, checked by two well-kept
// linters of published packages:
//   - publint (`--strict`: its warnings fail too): package.json fields, the exports map, file formats;
//   - Are the Types Wrong? (attw, profile `strict`): every entry point of the exports map resolved as
//     TypeScript resolves it under node10, node16 from CommonJS, node16 from an ES module and bundler,
//     types and JavaScript agreeing on the module format.
// It packs the way the consumer matrix does (test/consumers/run.mjs): a real `npm pack` of a temporary copy
// of the package files, so `prepack` builds there and packs package.json without its scripts; the
// checkout's dist/ and package.json are not touched. Nothing is fetched: attw runs with
// `--no-definitely-typed` (the package ships its own types), publint reads the tarball.
//
// Options: --keep (leave the temporary folder, to look at the tarball)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const bin = (name, file) => join(root, 'node_modules', name, file);
const quietNpm = {
  ...process.env,
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_update_notifier: 'false',
};

/** Runs a command with its output shown; returns its exit code. */
function run(label, command, args, cwd) {
  const started = Date.now();
  console.log(`\ncheck-package: ${label}`);
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', env: quietNpm });
  if (result.error) throw result.error;
  console.log(`check-package: ${label}: exit ${result.status} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return result.status ?? 1;
}

const work = mkdtempSync(join(tmpdir(), 'nestjs-payments-check-package-'));
let status;
try {
  // The files `prepack` needs to build, as test/consumers/run.mjs copies them.
  const copy = join(work, 'package');
  mkdirSync(copy);
  for (const name of [
    'lib',
    'scripts',
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'README.md',
    'LICENSE',
  ]) {
    if (existsSync(join(root, name))) cpSync(join(root, name), join(copy, name), { recursive: true });
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
  const started = Date.now();
  const packed = spawnSync('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: copy,
    encoding: 'utf8',
    env: quietNpm,
  });
  if (packed.status !== 0) {
    process.stderr.write(packed.stdout + packed.stderr);
    throw new Error(`npm pack failed (exit ${packed.status})`);
  }
  const [{ filename, entryCount, size }] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m)));
  const tarball = join(work, filename);
  console.log(
    `check-package: packed ${filename} (${entryCount} files, ${Math.round(size / 1024)} kB) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );

  const publint = run(
    'publint --strict',
    process.execPath,
    [bin('publint', 'src/cli.js'), 'run', tarball, '--strict'],
    root,
  );
  const attw = run(
    'attw --profile strict (node10, node16 from CommonJS, node16 from ESM, bundler; every entry point)',
    process.execPath,
    [
      bin('@arethetypeswrong/cli', 'dist/index.js'),
      tarball,
      '--profile',
      'strict',
      '--no-definitely-typed',
      '--format',
      'ascii',
    ],
    root,
  );
  status = publint === 0 && attw === 0 ? 0 : 1;
  console.log(
    `\ncheck-package: ${status === 0 ? 'the packed package passes publint and attw' : 'FAILED: see publint / attw above'}`,
  );
} finally {
  if (keep) console.log(`check-package: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
process.exit(status);
