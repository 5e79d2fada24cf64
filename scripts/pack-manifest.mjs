#!/usr/bin/env node
// `prepack` / `postpack` (npm runs them around `npm pack` and `npm publish`, never for installs):
// the packed package.json carries no `scripts`. A tarball is installed as built, so its `prepare`
// (scripts/prepare.mjs, which is not in the tarball either) would never run there, and npm lists any
// `prepare` of a dependency as an install script to review ("install-scripts ... not yet covered by
// allowScripts"). Installs from git or from a path still get the full package.json: npm runs `prepare`
// for those itself, without prepack.
//
//   node scripts/pack-manifest.mjs strip     keeps package.json in dist/package.json.before-pack and
//                                            writes it without `scripts`
//   node scripts/pack-manifest.mjs restore   puts the kept package.json back (after the pack, or by
//                                            hand after an interrupted one)
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const kept = join(root, 'dist', 'package.json.before-pack');
const command = process.argv[2];

if (command === 'strip') {
  if (existsSync(kept)) {
    console.error(
      `nestjs-payments pack: ${kept} exists, an earlier pack was interrupted; run \`node scripts/pack-manifest.mjs restore\` first`,
    );
    process.exit(1);
  }
  const text = readFileSync(manifest, 'utf8');
  const { scripts, ...rest } = JSON.parse(text);
  mkdirSync(dirname(kept), { recursive: true });
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(rest, null, 2)}\n`);
  console.log(`nestjs-payments pack: package.json packed without its ${Object.keys(scripts ?? {}).length} scripts`);
} else if (command === 'restore') {
  if (!existsSync(kept)) {
    console.error('nestjs-payments pack: nothing to restore (no dist/package.json.before-pack)');
    process.exit(1);
  }
  renameSync(kept, manifest);
  console.log('nestjs-payments pack: package.json restored');
} else {
  console.error('usage: node scripts/pack-manifest.mjs strip|restore');
  process.exit(2);
}
