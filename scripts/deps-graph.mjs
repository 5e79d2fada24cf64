#!/usr/bin/env node
// Which folder of lib/ imports which: `npm run deps:graph` (working tree), `npm run deps:graph -- --rev cb09c5b`
// (a commit, read with git), `--full` (every folder, not only the areas lib/<area>), `--root DIR` (another tree),
// `--check` (exit 1 on a cycle between areas, on any cycle between files of lib/ (type-only imports included: see
// fileCycles()), on the core importing anything but itself, on the client importing the receiver, and on the
// receiver's own rules: see receiverProblems()).
// Plain Node, no dependency: it reads the relative `import` / `export ... from` / `import()` specifiers.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
// `--root DIR`: another tree than this repository's (the script's own test runs it on a fixture).
const root = args.includes('--root')
  ? resolve(args[args.indexOf('--root') + 1])
  : join(dirname(fileURLToPath(import.meta.url)), '..');
const rev = args.includes('--rev') ? args[args.indexOf('--rev') + 1] : undefined;
const full = args.includes('--full');
const check = args.includes('--check');

/** [path relative to the repo, source text] of every .ts file under lib/. */
function sources() {
  if (rev) {
    const files = execFileSync('git', ['ls-tree', '-r', '--name-only', rev, 'lib'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file.endsWith('.ts'));
    return files.map((file) => [
      file,
      execFileSync('git', ['show', `${rev}:${file}`], { cwd: root, encoding: 'utf8' }),
    ]);
  }
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) out.push([path, readFileSync(join(root, path), 'utf8')]);
    }
  };
  walk('lib');
  return out;
}

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|^\s*import\s+['"](\.[^'"]+)['"]/gm;

/** `lib/webhooks/queue/x.ts` -> `lib/webhooks/queue` (full) or `lib/webhooks` (areas); files at the root -> `lib`. */
const folderOf = (file) => {
  const dir = dirname(file).split('\\').join('/');
  return full ? dir : dir.split('/').slice(0, 2).join('/');
};

const edges = new Map();
for (const [file, text] of sources()) {
  const from = folderOf(file);
  for (const match of text.matchAll(SPECIFIER)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    const target = normalize(join(dirname(file), specifier))
      .split('\\')
      .join('/');
    const to = folderOf(relative(root, join(root, target)));
    if (to === from) continue;
    const key = `${from} -> ${to}`;
    edges.set(key, (edges.get(key) ?? 0) + 1);
  }
}

const byFrom = new Map();
for (const [key, count] of edges) {
  const [from, to] = key.split(' -> ');
  if (!byFrom.has(from)) byFrom.set(from, []);
  byFrom.get(from).push(`${to} (${count})`);
}
const folders = new Set([...sources().map(([file]) => folderOf(file))]);
console.log(`# folder -> folders it imports (import lines)${rev ? ` at ${rev}` : ''}`);
for (const folder of [...folders].sort()) {
  console.log(`${folder} -> ${(byFrom.get(folder) ?? []).sort().join(', ') || '(nothing)'}`);
}

const problems = [];
for (const key of edges.keys()) {
  const [from, to] = key.split(' -> ');
  if (!full && edges.has(`${to} -> ${from}`) && from < to) problems.push(`cycle: ${from} <-> ${to}`);
  if (from === 'lib/core') problems.push(`core imports ${to}`);
  if (from.startsWith('lib/client') && to.startsWith('lib/webhooks')) problems.push(`client imports ${to}`);
}
problems.push(...receiverProblems());
problems.push(...fileCycles());
if (problems.length > 0) {
  console.log(`\n# problems\n${problems.join('\n')}`);
  if (check) process.exitCode = 1;
}

/**
 * The house rules of the receiver (lib/webhooks), read at folder granularity whatever the mode:
 * - contracts/ imports nothing of lib/webhooks (only core, errors, client types), and holds declarations
 *   only: no function or class body (interfaces, types, tokens, constants);
 * - the plug-ins (stores, verifiers, queue, transactional, journal, reconcile) import only contracts/ and
 *   support/ (the receiver's own helpers) of lib/webhooks; support/ imports only contracts/;
 * - dispatch/ (the dispatcher) imports no plug-in: plug-ins reach it through `PaymentsDispatchPlugin`;
 * - no subfolder imports the root of lib/webhooks (the wiring): no arrow back up;
 * - no cycle between the subfolders (any length);
 * - lib/postgres (the engine helpers the store and the inbox share) imports only core and errors.
 */
function receiverProblems() {
  const found = [];
  const W = 'lib/webhooks';
  const PLUG_INS = new Set(
    ['stores', 'verifiers', 'queue', 'transactional', 'journal', 'reconcile'].map((name) => `${W}/${name}`),
  );
  const graph = new Map();
  for (const [file, text] of sources()) {
    const from = dirname(file).split('\\').join('/');
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      const to = dirname(
        normalize(join(dirname(file), specifier))
          .split('\\')
          .join('/'),
      );
      if (to === from) continue;
      if (from === 'lib/postgres' && !['lib/core', 'lib/errors'].includes(to))
        found.push(`lib/postgres imports ${to} (${file})`);
      if (!from.startsWith(`${W}/`)) continue;
      if (to === W) found.push(`arrow back up: ${file} imports the root of ${W}`);
      if (!to.startsWith(`${W}/`)) continue;
      if (from === `${W}/contracts`) found.push(`contracts imports ${to} (${file})`);
      const shared = to === `${W}/contracts` || to === `${W}/support`;
      if (PLUG_INS.has(from) && !shared) found.push(`plug-in ${from} imports ${to} (${file})`);
      if (from === `${W}/support` && to !== `${W}/contracts`) found.push(`support imports ${to} (${file})`);
      if (from === `${W}/dispatch` && PLUG_INS.has(to)) found.push(`the dispatcher imports plug-in ${to} (${file})`);
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from).add(to);
    }
  }
  for (const [file, text] of sources()) {
    if (!file.split('\\').join('/').startsWith(`${W}/contracts/`)) continue;
    // Runtime code: a function or a class with a body (a declared signature, a type or a constant is fine).
    if (/^export (async )?function |^export class |^(async )?function |^class /m.test(text))
      found.push(`contracts holds runtime code: ${file} (move it to ${W}/support or the part that runs it)`);
  }
  // Cycles of any length between the subfolders: a depth-first walk that meets a folder on its own path.
  const state = new Map();
  const visit = (node, path) => {
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push(`cycle: ${[...path.slice(path.indexOf(next)), next].join(' -> ')}`);
      else if (!state.has(next)) visit(next, [...path, next]);
    }
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node, [node]);
  return found;
}

/**
 * Cycles between files anywhere in lib/, whatever kind of import closes them (`import type` and
 * `export type ... from` included: a type-only circle is still two files that cannot be read apart).
 * Each strongly connected component of the file graph is one problem, shown as one circle through it.
 */
function fileCycles() {
  const files = new Map(sources().map(([file, text]) => [file.split('\\').join('/'), text]));
  const graph = new Map();
  for (const [file, text] of files) {
    const targets = new Set();
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      const target = normalize(join(dirname(file), specifier))
        .split('\\')
        .join('/');
      const candidates = [target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}/index.ts`];
      const resolved = candidates.find((candidate) => files.has(candidate));
      if (resolved !== undefined) targets.add(resolved);
    }
    graph.set(file, targets);
  }
  // Tarjan's strongly connected components, iteratively (no recursion limit on a long chain).
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  let counter = 0;
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work = [[start, [...graph.get(start)].sort(), 0]];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, nexts] = frame;
      if (frame[2] < nexts.length) {
        const next = nexts[frame[2]++];
        if (!index.has(next)) {
          index.set(next, counter);
          low.set(next, counter++);
          stack.push(next);
          onStack.add(next);
          work.push([next, [...graph.get(next)].sort(), 0]);
        } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1 || graph.get(node).has(node)) components.push(component);
      }
    }
  }
  return components.map((component) => `file cycle: ${circleThrough(graph, new Set(component))}`);
}

/** One circle inside a strongly connected component, as `a -> b -> ... -> a` (breadth-first, so the shortest from its first file). */
function circleThrough(graph, members) {
  const first = [...members].sort()[0];
  const previous = new Map([[first, undefined]]);
  const queue = [first];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node)) {
      if (!members.has(next)) continue;
      if (next === first) {
        const path = [node];
        while (previous.get(path[0]) !== undefined) path.unshift(previous.get(path[0]));
        return [...path, first].join(' -> ');
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [...members].sort().join(', ');
}
