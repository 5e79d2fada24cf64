import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `prepare` (scripts/prepare.mjs) is what builds the package when it is installed from git or from a
 * path. Building for real is proven by `npm run test:consumers` and CI's `npm ci`; here, its two
 * decisions, on a copy of the script in a scratch package (no TypeScript there).
 */
const root = process.cwd();
let scratch: string;

function prepare(env: Record<string, string>) {
  const result = spawnSync(process.execPath, [join(scratch, 'scripts', 'prepare.mjs')], {
    cwd: scratch,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('prepare script', () => {
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'nestjs-payments-prepare-'));
    mkdirSync(join(scratch, 'scripts'));
    cpSync(join(root, 'scripts', 'prepare.mjs'), join(scratch, 'scripts', 'prepare.mjs'));
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', type: 'module' }));
    mkdirSync(join(scratch, 'dist', 'lib'), { recursive: true });
    writeFileSync(join(scratch, 'dist', 'lib', 'index.js'), '// an earlier build\n');
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('does not build on a plain `npm install` inside the checkout itself (adding a dev package)', () => {
    const run = prepare({ INIT_CWD: scratch, npm_command: 'install' });
    expect(run).toEqual({ status: 0, output: expect.stringContaining('not building') });
    expect(existsSync(join(scratch, 'dist', 'lib', 'index.js'))).toBe(true);
  });

  it('builds for an install from elsewhere (git URL, path) and says what to do when TypeScript is missing', () => {
    const run = prepare({ INIT_CWD: tmpdir(), npm_command: 'install' });
    expect(run.status).toBe(1);
    expect(run.output).toContain('TypeScript is not installed');
    expect(run.output).toContain('run `npm install` (or `npm ci`) in that folder first');
  });

  it('builds on `npm ci` in the checkout (CI)', () => {
    const run = prepare({ INIT_CWD: scratch, npm_command: 'ci' });
    expect(run.status).toBe(1); // it tried: no TypeScript in the scratch package
    expect(run.output).toContain('TypeScript is not installed');
  });
});
