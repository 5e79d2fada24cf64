import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.cwd();

/** Files of the repository (tracked or new, not ignored) under `dirs`, with one of `extensions`. */
function repositoryFiles(dirs: string[], extensions: RegExp): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...dirs], {
    cwd: root,
    encoding: 'utf8',
  });
  return listed
    .split('\n')
    .filter((file) => extensions.test(file))
    .filter((file) => {
      try {
        readFileSync(join(root, file));
        return true;
      } catch {
        return false; // listed but deleted in the working tree
      }
    });
}

/**
 * Names of documents that live beside a checkout but not in the repository: a comment, a test title
 * or a page that points at them sends a reader (or a user of the published package) nowhere. Built
 * from parts so that this file does not match itself.
 */
const OUTSIDE = [['SERVICE', 'REFERENCE'].join('-'), ['DESIGN', 'md'].join('.'), ['CONFORMANCE', 'md'].join('.')];

describe('house rules', () => {
  it('no source, test, sample, bench or doc points at files outside the repository', () => {
    const offenders: string[] = [];
    for (const file of repositoryFiles(
      ['lib', 'test', 'sample', 'bench', 'scripts', 'docs', 'README.md'],
      /\.(ts|js|mjs|md)$/,
    )) {
      const lines = readFileSync(join(root, file), 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (OUTSIDE.some((name) => line.includes(name))) offenders.push(`${file}:${index + 1}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  it('the package ships a LICENSE whose terms match package.json', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string };
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(manifest.license).toBe('MIT');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 nestjs-payments contributors\n/);
  });
});
