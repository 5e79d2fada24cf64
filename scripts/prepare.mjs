#!/usr/bin/env node
// `prepare`: npm runs it after `npm ci` / `npm install` in this folder, and when the package is
// installed from source (`npm install <git url>`, `npm install <path>` of a packed or cloned copy),
// before packing it. It builds dist/ as `npm run build` does, so what gets installed is built: lib/
// compiled once as CommonJS into dist/cjs/, then the ES module wrappers of dist/esm/
// (scripts/esm-wrappers.mjs).
//
// One case is skipped: `npm install [name]` run inside this checkout itself (INIT_CWD is this folder),
// which only adds or updates packages for development; a half-edited lib/ must not make that fail.
// `npm run build` builds there. `npm ci` (CI) and installs from another folder always build.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const initCwd = process.env.INIT_CWD ? resolve(process.env.INIT_CWD) : undefined;
if (initCwd === root && process.env.npm_command === 'install') {
  console.log(
    'nestjs-payments prepare: `npm install` in the checkout itself, not building (`npm run build` builds dist/)',
  );
  process.exit(0);
}
let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  console.error(
    `nestjs-payments prepare: TypeScript is not installed in ${root}. Building from source needs the dev dependencies: ` +
      'run `npm install` (or `npm ci`) in that folder first, or install from a git URL (npm installs them itself).',
  );
  process.exit(1);
}
for (const dir of ['lib', 'cjs', 'esm']) rmSync(join(root, 'dist', dir), { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) {
  console.error('nestjs-payments prepare: compiling lib/ failed (tsc -p tsconfig.build.json), see above');
  process.exit(result.status ?? 1);
}
const wrappers = spawnSync(process.execPath, [join(root, 'scripts', 'esm-wrappers.mjs')], {
  cwd: root,
  stdio: 'inherit',
});
if (wrappers.status !== 0) {
  console.error('nestjs-payments prepare: writing the ES module wrappers failed (scripts/esm-wrappers.mjs), see above');
  process.exit(wrappers.status ?? 1);
}
console.log('nestjs-payments prepare: built dist/cjs and dist/esm');
