#!/usr/bin/env node
// `npm run commits:check` (CI): every commit subject is under 72 characters, the details in the body.
// It checks the commits above a fixed base, BASE below (older history has long subjects and is not
// rewritten): `git log BASE..HEAD`, merges included.
//
// A clone may lack the base: a shallow clone (CI's `git clone --depth N`) checks the commits it has that
// were committed after the base (its committer date, BASE_DATE: older commits of the shallow history, e.g.
// from a merged branch, were written before the rule); any other clone without it, or a folder that is not
// a git checkout, is skipped with the reason printed. A missing base never fails the check.
//
// Options: --base <rev> (another base, e.g. to try the check on a branch)
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** main's HEAD when the rule came in, and its committer date. */
const BASE = '599366d038a513eed3aa234822f7cbcaea554aa1';
const BASE_DATE = '2026-11-26T15:51:18+00:00';
const LIMIT = 72;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const base = args.includes('--base') ? args[args.indexOf('--base') + 1] : BASE;

function git(gitArgs) {
  const result = spawnSync('git', gitArgs, { cwd: root, encoding: 'utf8' });
  return { ok: result.status === 0, out: (result.stdout ?? '').trim() };
}

function skip(reason) {
  console.log(`commits:check: skipped, ${reason}`);
  process.exit(0);
}

if (!git(['rev-parse', '--is-inside-work-tree']).ok) skip('not a git checkout');
const hasBase = git(['rev-parse', '--verify', '--quiet', `${base}^{commit}`]).ok;
const shallow = git(['rev-parse', '--is-shallow-repository']).out === 'true';

let range;
let scope;
if (hasBase) {
  range = [`${base}..HEAD`];
  scope = `above ${base.slice(0, 7)}`;
} else if (shallow && base === BASE) {
  range = [`--since=${BASE_DATE}`, 'HEAD'];
  scope = `of this shallow clone committed after ${BASE_DATE} (the base ${BASE.slice(0, 7)} is not in it)`;
} else {
  skip(
    `the base ${base.slice(0, 7)} is not in this clone (nor is it shallow): no way to tell the new commits from the old`,
  );
}

// %x00 between fields and %x01 between commits: subjects may hold any printable character.
const log = git(['log', '--format=%H%x00%s%x01', ...range]);
if (!log.ok) skip(`git log ${range.join(' ')} failed`);
const commits = log.out
  .split('\x01')
  .map((entry) => entry.trim())
  .filter(Boolean)
  .map((entry) => {
    const [hash, subject] = entry.split('\x00');
    return { hash, subject, length: [...subject].length };
  });
const long = commits.filter(({ length }) => length >= LIMIT);

if (long.length > 0) {
  console.error(
    `commits:check: ${long.length} of ${commits.length} commits ${scope} have a subject of ${LIMIT} characters or more:`,
  );
  for (const { hash, subject, length } of long) console.error(`  ${hash.slice(0, 7)} (${length}) ${subject}`);
  console.error(
    `Keep the subject under ${LIMIT} characters and put the details in the body (git rebase -i, "reword", before merging).`,
  );
  process.exit(1);
}
console.log(`commits:check: ${commits.length} commits ${scope}, every subject under ${LIMIT} characters`);
