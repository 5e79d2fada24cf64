#!/usr/bin/env node
/**
 * Lays the test files out like lib/, so a change finds its tests by path:
 * test/<kind>/<lib folder>/<file>, where <kind> is unit, e2e, integration (Redis) or
 * integration/postgres, and <lib folder> is the folder of lib/ the file tests.
 *
 *   node scripts/tests-layout.mjs            prints the plan (git mv lines) and what it would rewrite
 *   node scripts/tests-layout.mjs --apply    runs the git mv and rewrites the relative imports
 *
 * Rewriting: every relative specifier (`from '...'`, `import('...')`, `new URL('...', import.meta.url)`,
 * `jest.unstable_mockModule('...')`) in a moved file is re-aimed from its new folder at the same target,
 * and every file of test/ that points at a moved file is re-aimed at its new path. Run it when nobody
 * else edits test/, then `npm run typecheck` and the suites.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const MOVES = [
  // unit: lib/webhooks/verifiers, lib/webhooks/stores, lib/webhooks/journal
  ['test/unit/verifiers/edge-cases.spec.ts', 'test/unit/webhooks/verifiers/edge-cases.spec.ts'],
  ['test/unit/verifiers/hmac.verifier.spec.ts', 'test/unit/webhooks/verifiers/hmac.verifier.spec.ts'],
  [
    'test/unit/verifiers/standard-webhooks.verifier.spec.ts',
    'test/unit/webhooks/verifiers/standard-webhooks.verifier.spec.ts',
  ],
  ['test/unit/webhooks/memory-idempotency.store.spec.ts', 'test/unit/webhooks/stores/memory-idempotency.store.spec.ts'],
  [
    'test/unit/webhooks/payment-delivery.journal.spec.ts',
    'test/unit/webhooks/journal/payment-delivery.journal.spec.ts',
  ],
  // unit: the module and its options live at the root of lib/
  ['test/unit/options/payments-options.boot.spec.ts', 'test/unit/payments-options.boot.spec.ts'],
  ['test/unit/options/payments-module.async.spec.ts', 'test/unit/payments-module.async.spec.ts'],
  ['test/unit/options/named-instances.boot.spec.ts', 'test/unit/named-instances.boot.spec.ts'],
  // unit: checks of the docs (no lib/ folder): test/unit/docs
  ['test/unit/options/readme-quick-start.spec.ts', 'test/unit/docs/readme-quick-start.spec.ts'],
  ['test/unit/readme-open-choices.spec.ts', 'test/unit/docs/readme-open-choices.spec.ts'],
  // e2e: lib/testing/simulator, lib/health
  ['test/e2e/simulator/simulator-api.spec.ts', 'test/e2e/testing/simulator/simulator-api.spec.ts'],
  [
    'test/e2e/simulator/simulator-checkout-browser.spec.ts',
    'test/e2e/testing/simulator/simulator-checkout-browser.spec.ts',
  ],
  ['test/e2e/simulator/simulator-checkout.spec.ts', 'test/e2e/testing/simulator/simulator-checkout.spec.ts'],
  ['test/e2e/simulator/simulator-deliveries.spec.ts', 'test/e2e/testing/simulator/simulator-deliveries.spec.ts'],
  ['test/e2e/simulator/simulator-with-module.spec.ts', 'test/e2e/testing/simulator/simulator-with-module.spec.ts'],
  ['test/e2e/simulator/webhook-receiver.fixture.ts', 'test/e2e/testing/simulator/webhook-receiver.fixture.ts'],
  ['test/e2e/telemetry/health.spec.ts', 'test/e2e/health/health.spec.ts'],
  // integration (Redis): lib/webhooks/stores, lib/webhooks/queue, lib/health, lib/telemetry
  [
    'test/integration/redis-idempotency.store.spec.ts',
    'test/integration/webhooks/stores/redis-idempotency.store.spec.ts',
  ],
  ['test/integration/payment-events-queue.spec.ts', 'test/integration/webhooks/queue/payment-events-queue.spec.ts'],
  ['test/integration/queued-processing.spec.ts', 'test/integration/webhooks/queue/queued-processing.spec.ts'],
  ['test/integration/health-redis.spec.ts', 'test/integration/health/health-redis.spec.ts'],
  ['test/integration/telemetry-queue.spec.ts', 'test/integration/telemetry/telemetry-queue.spec.ts'],
  // integration (PostgreSQL): stays under test/integration/postgres (its own config), laid out like lib/ inside
  [
    'test/integration/postgres/postgres-idempotency.store.spec.ts',
    'test/integration/postgres/webhooks/stores/postgres-idempotency.store.spec.ts',
  ],
  [
    'test/integration/postgres/pg-inbox.e2e.spec.ts',
    'test/integration/postgres/webhooks/transactional/pg-inbox.e2e.spec.ts',
  ],
];

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const apply = process.argv.includes('--apply');
const moves = MOVES.filter(([from]) => existsSync(path.join(root, from)));
const movedTo = new Map(moves.map(([from, to]) => [path.join(root, from), path.join(root, to)]));

/** Specifiers that name a file by a relative path, in the forms test files use. */
const SPECIFIER = /(from\s+|import\(\s*|new URL\(\s*|unstable_mockModule\(\s*|require\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;

/** The file a specifier names (`.js` in a specifier stands for the `.ts` source). */
function targetOf(fromFile, specifier) {
  const resolved = path.resolve(path.dirname(fromFile), specifier);
  const asTs = resolved.replace(/\.js$/, '.ts');
  return existsSync(asTs) ? { file: asTs, ts: true } : { file: resolved, ts: false };
}

function rewrite(file, newFile) {
  const text = readFileSync(file, 'utf8');
  const changes = [];
  const next = text.replace(SPECIFIER, (whole, lead, quote, specifier) => {
    const target = targetOf(file, specifier);
    if (newFile === file && !movedTo.has(target.file)) return whole;
    const finalTarget = movedTo.get(target.file) ?? target.file;
    let relative = path.relative(path.dirname(newFile), target.ts ? finalTarget.replace(/\.ts$/, '.js') : finalTarget);
    if (!relative.startsWith('.')) relative = `./${relative}`;
    if (specifier.endsWith('/') && !relative.endsWith('/')) relative = `${relative}/`;
    if (relative === specifier) return whole;
    changes.push(`${specifier} -> ${relative}`);
    return `${lead}${quote}${relative}${quote}`;
  });
  return { next, changes };
}

const testFiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'test'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter(
    (file) => /\.(ts|js|mjs)$/.test(file) && !file.includes('/node_modules/') && existsSync(path.join(root, file)),
  )
  .map((file) => path.join(root, file));

const edits = [];
for (const file of testFiles) {
  const newFile = movedTo.get(file) ?? file;
  const { next, changes } = rewrite(file, newFile);
  if (changes.length > 0) edits.push({ file, newFile, next, changes });
}

for (const [from, to] of moves) console.log(`git mv ${from} ${to}`);
for (const { file, changes } of edits) {
  console.log(`\n${path.relative(root, file)}:`);
  for (const change of changes) console.log(`  ${change}`);
}

if (apply) {
  for (const [from, to] of moves) {
    execFileSync('mkdir', ['-p', path.dirname(path.join(root, to))]);
    execFileSync('git', ['mv', from, to], { cwd: root });
  }
  for (const { newFile, next } of edits) writeFileSync(newFile, next);
  console.log(`\nmoved ${moves.length} files, rewrote imports in ${edits.length}`);
}
