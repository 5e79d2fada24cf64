import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(process.cwd(), 'scripts', 'deps-graph.mjs');
const trees: string[] = [];

/** A tree with `lib/` holding `files` (path under lib/ -> source). */
function treeOf(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'deps-graph-'));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, 'lib', path, '..'), { recursive: true });
    writeFileSync(join(root, 'lib', path), text);
  }
  return root;
}

function check(root?: string): { status: number | null; stdout: string } {
  const result = spawnSync(process.execPath, [script, '--check', ...(root ? ['--root', root] : [])], {
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout };
}

describe('deps:graph --check', () => {
  afterAll(() => {
    for (const root of trees) rmSync(root, { recursive: true, force: true });
  });

  it('passes on this repository: no cycle between files of lib/', () => {
    const { status, stdout } = check();
    expect(stdout).not.toContain('file cycle');
    expect(status).toBe(0);
  });

  it('fails on a cycle between two files of one folder, even when one side imports only types', () => {
    const root = treeOf({
      'core/a.ts': "import type { B } from './b.js';\nexport const a = (b: B): B => b;\n",
      'core/b.ts': "import { a } from './a.js';\nexport type B = number;\nexport const b = a;\n",
    });
    const { status, stdout } = check(root);
    expect(stdout).toContain('file cycle: lib/core/a.ts -> lib/core/b.ts -> lib/core/a.ts');
    expect(status).toBe(1);
  });

  it('fails on a longer cycle through a re-export and a folder index', () => {
    const root = treeOf({
      'core/a.ts': "export { b } from './b.js';\nexport const a = 1;\n",
      'core/b.ts': "import { c } from './inner/index.js';\nexport const b = c;\n",
      'core/inner/index.ts': "export type { A } from '../c.js';\nexport const c = 3;\n",
      'core/c.ts': "import { a } from './a.js';\nexport type A = typeof a;\n",
    });
    const { status, stdout } = check(root);
    expect(stdout).toContain(
      'file cycle: lib/core/a.ts -> lib/core/b.ts -> lib/core/inner/index.ts -> lib/core/c.ts -> lib/core/a.ts',
    );
    expect(status).toBe(1);
  });

  it('passes a tree whose files import each other in one direction only', () => {
    const root = treeOf({
      'core/a.ts': "import type { B } from './b.js';\nexport const a = (b: B): B => b;\n",
      'core/b.ts': 'export type B = number;\n',
    });
    expect(check(root).status).toBe(0);
  });
});
