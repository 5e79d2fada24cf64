#!/usr/bin/env node
// `prepare`: npm runs it after `npm ci` / `npm install` in this folder, and when the package is
// installed from source (`npm install <git url>`, `npm install <path>` of a packed or cloned copy),
// before packing it. It compiles lib/ into dist/ so what gets installed is built.
//
// A checkout that already has dist/lib is left alone (`npm run build` rebuilds it): an `npm install`
// of one more dev package must not rebuild, or fail on, work in progress that other tools read.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (existsSync(join(root, 'dist', 'lib', 'index.js')) && process.env.PAYMENTS_PREPARE_FORCE !== '1') {
  console.log('nestjs-payments prepare: dist/lib is present, not rebuilt (npm run build rebuilds it)');
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
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) {
  console.error('nestjs-payments prepare: compiling lib/ failed (tsc -p tsconfig.build.json), see above');
  process.exit(result.status ?? 1);
}
console.log('nestjs-payments prepare: built dist/lib');
