// The checks' power, shown: each fix of the protocol reverted in turn (in a copy of lib/, never in
// the checkout), then the model check (`npm run test:model`) and the simulation (SEEDS seeds, the
// seeds CI runs) run on it: at least one must fail, and the first seed (or the model scenario) that
// catches the revert is printed. `npm run test:sim:mutants`; CI runs it.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const seeds = process.env.SEEDS ?? '300';
const only = process.env.MUTANT;

/** Each mutant: a fix and the text that reverts it (every `from` must still be in its file). */
const mutants = [
  {
    name: 'issue 40 item 2: the slot of a run chosen by the options (a terminal state keyed apart)',
    file: 'lib/webhooks/dispatch/payment-events.dispatcher.ts',
    from: 'const run: HandlerRun = { handler, event, key: record.key, slot: runSlot(record, handler.id), eventId, unwatch };',
    to: "const run: HandlerRun = { handler, event, key: record.key, slot: runSlot(record, handler.id) + (this.hooks.unwatches(record) ? '!' : ''), eventId, unwatch };",
  },
  {
    name: 'a release that ignores its token',
    file: 'lib/webhooks/stores/memory-idempotency.store.ts',
    from: 'if (record === undefined || run === undefined || run.owner !== release.token) return;',
    to: 'if (record === undefined || run === undefined) return;',
  },
  {
    name: 'a claim left held after the run was refused (the inbox said busy)',
    file: 'lib/webhooks/dispatch/payment-events.dispatcher.ts',
    from: "return this.released(run, token, { handler: handler.id, status: 'busy' });",
    to: "return { handler: handler.id, status: 'busy' };",
  },
  {
    name: 'the sweeper lease counted from after the due list was read',
    file: 'lib/webhooks/reconcile/payments-reconciler.ts',
    from: 'const lease = keepLease(this.store, this.owner, leaseMs, () => this.runtime.now(), askedAt);',
    to: 'const lease = keepLease(this.store, this.owner, leaseMs, () => this.runtime.now());',
  },
  {
    name: 'issue 29: one watch list for every instance',
    file: 'lib/webhooks/reconcile/reconciliation.plugin.ts',
    from: 'return store.intentWatchStore(instance);',
    to: 'return store.intentWatchStore();',
  },
  {
    name: 'issue 29: an unanswered retrieve stops the sweep, that intent not rescheduled',
    file: 'lib/webhooks/reconcile/watched-intent.retrieve.ts',
    from: 'const failures = (this.failures.get(intent.id) ?? 0) + 1;',
    to: "if (!(error instanceof PaymentsApiError)) return 'unavailable';\n    const failures = (this.failures.get(intent.id) ?? 0) + 1;",
  },
  {
    name: 'issue 29: intent ids used in the letter case they came in',
    file: 'lib/webhooks/records/record-keys.ts',
    from: 'return isUuid(id) ? lowerCaseUuid(id) : undefined;',
    to: 'return isUuid(id) ? id : undefined;',
  },
  {
    name: 'issue 29: the sweeper lease not renewed while sweeping',
    file: 'lib/webhooks/reconcile/reconcile-sweep.ts',
    from: 'if (!lost && now() - renewedAt >= everyMs) await renew();',
    to: '',
    also: ['setInterval(() => void renew(), everyMs)', 'setInterval(() => undefined, everyMs)'],
  },
  {
    name: 'issue 29: reconciled events with an empty id',
    // The event builder moved out of reconcile/ with current-state handling (5cd06c4), now in records/.
    file: 'lib/webhooks/records/retrieved-state.event.ts',
    from: 'id: uuidV5(`${kind}:${String(intent.id).toLowerCase()}:${state}`, RECONCILED_EVENT_NAMESPACE),',
    to: "id: '',",
  },
  {
    name: 'issue 42: runs never overlap (the current-state claim not exclusive)',
    file: 'lib/webhooks/dispatch/payment-events.dispatcher.ts',
    from: 'this.store.claim(run.key, { slot: run.slot, eventId: run.eventId, leaseMs: this.leaseMs, exclusive: true }),',
    to: 'this.store.claim(run.key, { slot: run.slot, eventId: run.eventId, leaseMs: this.leaseMs }),',
  },
  {
    name: "issue 42: an opted-in handler run without comparing the event's state with the retrieved one",
    file: 'lib/webhooks/dispatch/payment-events.dispatcher.ts',
    from: 'if (state === record.state) return this.runClaimed(run, claim, meta, intent);',
    to: 'if (record.state !== undefined) return this.runClaimed(run, claim, meta, intent);',
  },
  {
    name: 'issue 42: a failed current-state retrieve runs the handler anyway (on the event alone)',
    file: 'lib/webhooks/dispatch/payment-events.dispatcher.ts',
    from: '(error: unknown) => this.retrieveFailed(run, claim.token, record, error),',
    to: '() => this.runClaimed(run, claim, meta),',
  },
  {
    name: 'issue 42: the shared retrieve never forgotten (its answer served to every later run)',
    file: 'lib/webhooks/dispatch/current-intent.retrieval.ts',
    from: '.finally(() => this.inFlight.delete(record.key));',
    to: '.finally(() => undefined);',
  },
  {
    name: "issue 42: the inbox's handler context without ctx.intent",
    file: 'lib/webhooks/transactional/payments-inbox.ts',
    from: '            intent: ctx.intent,\n',
    to: '',
  },
  {
    name: "issue 41: a plug-in's after-hook that throws stops the hooks after it",
    file: 'lib/webhooks/dispatch/dispatch-hooks.ts',
    from: "this.logger.warn(`The ${plugin.name} plug-in's afterDispatch threw and was ignored: ${describe(error)}`);",
    to: "this.logger.warn(`The ${plugin.name} plug-in's afterDispatch threw and was ignored: ${describe(error)}`);\n        return;",
  },
];

/** Runs one jest config in `dir`; the first line naming what caught the mutant, or undefined. */
function caughtBy(dir, config, env, pattern) {
  try {
    execFileSync(process.execPath, ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', '--config', config], {
      cwd: dir,
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return undefined;
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    return pattern.exec(output)?.[0] ?? 'failed (see its output)';
  }
}

let missed = 0;
for (const mutant of mutants.filter((m) => only === undefined || m.name.includes(only))) {
  const dir = mkdtempSync(join(tmpdir(), 'payments-mutant-'));
  const started = Date.now();
  try {
    for (const entry of [
      'lib',
      'test',
      'jest.base.js',
      'jest.sim.config.js',
      'jest.model.config.js',
      'tsconfig.json',
      'package.json',
    ]) {
      cpSync(join(root, entry), join(dir, entry), { recursive: true });
    }
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const path = join(dir, mutant.file);
    let mutated = readFileSync(path, 'utf8');
    for (const [from, to] of [[mutant.from, mutant.to], ...(mutant.also ? [mutant.also] : [])]) {
      if (!mutated.includes(from)) throw new Error(`mutant ${mutant.name}: its text is no longer in ${mutant.file}`);
      mutated = mutated.replace(from, to);
    }
    writeFileSync(path, mutated);
    const model = caughtBy(dir, 'jest.model.config.js', {}, /model check: [^\n]+/);
    const sim = caughtBy(dir, 'jest.sim.config.js', { SEEDS: seeds, FIRST_FAILURE: '1' }, /seed \d+: [^:\n]+/);
    const seconds = Math.round((Date.now() - started) / 1000);
    if (model || sim) {
      console.log(`mutant ${mutant.name} (${seconds} s):`);
      console.log(`  model check: ${model ?? 'passed'}`);
      console.log(`  simulation (${seeds} seeds): ${sim ?? 'passed'}`);
    } else {
      missed++;
      console.log(`mutant ${mutant.name}: NOT caught (model check and ${seeds} seeds passed, ${seconds} s)`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
process.exit(missed === 0 ? 0 : 1);
