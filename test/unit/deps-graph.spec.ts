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

  it('fails when the dispatcher imports a plug-in, and passes when plug-ins share contracts/ and support/', () => {
    const seam = {
      'webhooks/contracts/plugin.ts': 'export interface Plugin { name: string }\n',
      'webhooks/support/notify.ts':
        "import type { Plugin } from '../contracts/plugin.js';\nexport const notify = (p: Plugin) => p.name;\n",
      'webhooks/transactional/inbox.ts':
        "import type { Plugin } from '../contracts/plugin.js';\nimport { notify } from '../support/notify.js';\nexport const inbox: Plugin = { name: notify({ name: 'inbox' }) };\n",
      'webhooks/dispatch/dispatcher.ts':
        "import type { Plugin } from '../contracts/plugin.js';\nexport const run = (p: Plugin[]) => p.length;\n",
    };
    expect(check(treeOf(seam)).status).toBe(0);
    const threaded = check(
      treeOf({
        ...seam,
        'webhooks/dispatch/dispatcher.ts':
          "import { inbox } from '../transactional/inbox.js';\nexport const run = () => inbox;\n",
      }),
    );
    expect(threaded.stdout).toContain('the dispatcher imports plug-in lib/webhooks/transactional');
    expect(threaded.status).toBe(1);
  });

  it('fails when contracts/ holds runtime code (a function body)', () => {
    const { status, stdout } = check(
      treeOf({ 'webhooks/contracts/util.ts': 'export function helper(): number {\n  return 1;\n}\n' }),
    );
    expect(stdout).toContain('contracts holds runtime code: lib/webhooks/contracts/util.ts');
    expect(status).toBe(1);
  });
});
