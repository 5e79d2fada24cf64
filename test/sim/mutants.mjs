// The simulation's power, shown: each fix of issue 29 reverted in turn (in a copy of lib/, never in the
// checkout), then the simulation run over SEEDS seeds; it must fail, and the first seed that catches
// the revert is printed. `npm run test:sim:mutants` (about a minute per mutant on 2 cores).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const seeds = process.env.SEEDS ?? '40';

/** Each mutant: a fix of issue 29 and the text that reverts it. */
const mutants = [
  {
    name: '1: one watch list for every instance',
    file: 'lib/webhooks/payments-webhooks.plugins.ts',
    from: 'return store.intentWatchStore(instance);',
    to: 'return store.intentWatchStore();',
  },
  {
    name: '2: one key, chosen by the options (occurrence only with reconciliation on)',
    file: 'lib/webhooks/dispatch/payment-events.dispatcher.ts',
    from: 'meta = withOccurrence(event, meta, this.terminalStates);',
    to: 'if (this.watchList) meta = withOccurrence(event, meta, this.terminalStates);',
    other: {
      file: 'lib/webhooks/dispatch/handler-claims.ts',
      from: "// A terminal state's webhook (the usual delivery) needs no `seen` key: built only where it is used.",
      to: 'return { handler, event, key: occurrence.terminal ? occurrenceKey : eventKey };',
    },
  },
  {
    name: '3: an unanswered retrieve stops the sweep, that intent not rescheduled',
    file: 'lib/webhooks/reconcile/watched-intent.check.ts',
    from: 'const failures = (this.failures.get(intent.id) ?? 0) + 1;',
    to: "if (!(error instanceof PaymentsApiError)) return 'unavailable';\n    const failures = (this.failures.get(intent.id) ?? 0) + 1;",
  },
  {
    name: '5: intent ids used in the letter case they came in',
    file: 'lib/webhooks/handlers/payment-event.context.ts',
    from: 'return isUuid(id) ? lowerCaseUuid(id) : undefined;',
    to: 'return isUuid(id) ? id : undefined;',
  },
  {
    name: '6: the sweeper lease not renewed while sweeping',
    file: 'lib/webhooks/reconcile/reconcile-sweep.ts',
    from: 'if (!lost && now() - renewedAt >= everyMs) await renew();',
    to: '',
    also: ['setInterval(() => void renew(), everyMs)', 'setInterval(() => undefined, everyMs)'],
  },
  {
    name: '7: reconciled events with an empty id',
    file: 'lib/webhooks/reconcile/reconcile-sweep.ts',
    from: 'id: uuidV5(`${kind}:${String(intent.id).toLowerCase()}:${state}`, RECONCILED_EVENT_NAMESPACE),',
    to: "id: '',",
  },
];

let missed = 0;
for (const mutant of mutants) {
  const dir = mkdtempSync(join(tmpdir(), 'payments-mutant-'));
  try {
    for (const entry of ['lib', 'test', 'jest.base.js', 'jest.sim.config.js', 'tsconfig.json', 'package.json']) {
      cpSync(join(root, entry), join(dir, entry), { recursive: true });
    }
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const path = join(dir, mutant.file);
    const source = readFileSync(path, 'utf8');
    let mutated = source;
    for (const [from, to] of [[mutant.from, mutant.to], ...(mutant.also ? [mutant.also] : [])]) {
      if (!mutated.includes(from)) throw new Error(`mutant ${mutant.name}: its text is no longer in ${mutant.file}`);
      mutated = mutated.replace(from, to);
    }
    writeFileSync(path, mutated);
    if (mutant.other) {
      const otherPath = join(dir, mutant.other.file);
      const text = readFileSync(otherPath, 'utf8');
      if (!text.includes(mutant.other.from))
        throw new Error(`mutant ${mutant.name}: its text is no longer in ${mutant.other.file}`);
      writeFileSync(otherPath, text.replace(mutant.other.from, mutant.other.to));
    }
    let output = '';
    let failed = false;
    try {
      output = execFileSync(
        process.execPath,
        ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', '--config', 'jest.sim.config.js'],
        { cwd: dir, env: { ...process.env, SEEDS: seeds }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch (error) {
      failed = true;
      output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    }
    const caught = /seed (\d+): ([^:\n]+)/.exec(output);
    if (failed && caught) console.log(`mutant ${mutant.name}: caught by seed ${caught[1]} (${caught[2]})`);
    else {
      missed++;
      console.log(`mutant ${mutant.name}: NOT caught in ${seeds} seeds`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
process.exit(missed === 0 ? 0 : 1);
