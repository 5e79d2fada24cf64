#!/usr/bin/env node
// `npm run changeset:check` (CI): the release step, rehearsed. Runs `changeset version` on a temporary copy
// of package.json, CHANGELOG.md and .changeset/ (in a fresh git repository, as the changelog generator
// reads the commit that added each changeset) and checks what a release would write:
//   - every pending changeset parses, names this package and a bump (`changeset version` fails otherwise),
//     and is consumed;
//   - package.json gets the next version;
//   - CHANGELOG.md gets that version's section right below its `# Changelog` title, with every line it had
//     kept after it.
// Nothing in the checkout changes and nothing is fetched. `changeset status` is not used here: it
// compares the branch with `main`, which a clean clone of main has nothing to compare with
// (.changeset/README.md).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const changesetBin = join(root, 'node_modules', '@changesets', 'cli', 'bin.js');

/** The pending changesets: every .md of .changeset/ but its README. */
const pending = (dir) =>
  readdirSync(join(dir, '.changeset')).filter((name) => name.endsWith('.md') && name !== 'README.md');

function must(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

const changesets = pending(root);
if (changesets.length === 0) {
  console.log('changeset:check: no pending changeset (nothing to release)');
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), 'nestjs-payments-changesets-'));
try {
  for (const name of ['package.json', 'CHANGELOG.md', '.changeset']) {
    cpSync(join(root, name), join(work, name), { recursive: true });
  }
  const git = ['-c', 'user.name=changeset-check', '-c', 'user.email=changeset-check@localhost'];
  must('git', ['init', '--quiet', '--initial-branch=main'], work);
  must('git', ['add', '.'], work);
  must('git', [...git, 'commit', '--quiet', '--no-gpg-sign', '-m', 'pending changesets'], work);
  symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'dir');

  const before = {
    version: JSON.parse(readFileSync(join(work, 'package.json'), 'utf8')).version,
    changelog: readFileSync(join(work, 'CHANGELOG.md'), 'utf8'),
  };
  must(process.execPath, [changesetBin, 'version'], work);
  const version = JSON.parse(readFileSync(join(work, 'package.json'), 'utf8')).version;
  const changelog = readFileSync(join(work, 'CHANGELOG.md'), 'utf8');

  const problems = [];
  const left = pending(work);
  if (left.length > 0) problems.push(`changesets not consumed: ${left.join(', ')}`);
  if (version === before.version) problems.push(`package.json kept its version ${version}`);
  const [title, ...rest] = before.changelog.split('\n');
  if (title !== '# Changelog') problems.push(`CHANGELOG.md's first line is "${title}", not "# Changelog"`);
  const expectedStart = `${title}\n\n## ${version}\n`;
  if (!changelog.startsWith(expectedStart)) problems.push(`CHANGELOG.md does not start with the ${version} section`);
  if (!changelog.endsWith(rest.join('\n'))) problems.push('CHANGELOG.md lost or changed lines it had');
  const section = changelog.slice(title.length, changelog.length - rest.join('\n').length).trim();

  if (problems.length > 0) throw new Error(problems.join('; '));
  console.log(
    `changeset:check: ${changesets.length} pending changeset(s) (${changesets.join(', ')}): ` +
      `\`npx changeset version\` would release ${before.version} -> ${version}, ` +
      `CHANGELOG.md gaining ${section.split('\n').length} lines above its ${rest.length} lines:\n`,
  );
  console.log(
    section
      .split('\n')
      .map((line) => (line.length > 110 ? `${line.slice(0, 107)}...` : line))
      .join('\n'),
  );
} catch (error) {
  console.error(`changeset:check: ${error.message}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
