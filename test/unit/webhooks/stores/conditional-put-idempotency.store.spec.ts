import { describe, expect, it } from '@jest/globals';
import type { IdempotencyStore } from '../../../../lib/index.js';
import type { RunCompletion } from '../../../../lib/webhooks/index.js';
import {
  describeIdempotencyStore,
  type IdempotencyStoreContractFramework,
  type IdempotencyStoreContractOptions,
} from '../../../../lib/testing/index.js';
import { ConditionalPutIdempotencyStore, ConditionalTable } from './conditional-put-idempotency.store.example.js';
import type { RunRecordDocument } from '../../../../lib/webhooks/index.js';

/*
 * The store contract, run by a third party's store: the conditional-put example of
 * docs/custom-store.md (the shape of a DynamoDB store), on a table in memory and an injected clock.
 */
let now = 1_700_000_000_000;
const tables = new WeakMap<IdempotencyStore, ConditionalTable>();
const exampleStore = (): ConditionalPutIdempotencyStore => {
  const table = new ConditionalTable();
  const store = new ConditionalPutIdempotencyStore(table, { now: () => now });
  tables.set(store, table);
  return store;
};
const contractOptions: IdempotencyStoreContractOptions<ConditionalPutIdempotencyStore> = {
  elapse: (ms) => {
    now += ms;
  },
  forget: (store, key) => tables.get(store)!.delete(key),
  // The example keeps no watch list: the reconciler would keep one in memory beside it.
  watchList: false,
};

describeIdempotencyStore(
  'ConditionalPutIdempotencyStore (a DynamoDB-style third-party store)',
  exampleStore,
  contractOptions,
);

/** The cases a run registered, and how each went. */
interface ContractRun {
  passed: string[];
  failed: Array<{ name: string; error: string }>;
}

/**
 * Runs the contract under a test runner of our own (no Jest `describe`/`it`), as a team on another
 * runner would pass theirs through `framework`: it registers the cases, then runs each with its hooks.
 */
async function runContract<S extends IdempotencyStore>(
  factory: () => S,
  options: IdempotencyStoreContractOptions<S>,
): Promise<ContractRun> {
  const cases: Array<{ name: string; fn: () => Promise<void> }> = [];
  const before: Array<() => Promise<void>> = [];
  const after: Array<() => Promise<void>> = [];
  const path: string[] = [];
  const framework: IdempotencyStoreContractFramework = {
    describe: (name, fn) => {
      path.push(name);
      fn();
      path.pop();
    },
    it: (name, fn) => cases.push({ name: [...path, name].join(' > '), fn }),
    beforeEach: (fn) => before.push(fn),
    afterEach: (fn) => after.push(fn),
  };
  describeIdempotencyStore('under test', factory, { ...options, framework });
  const run: ContractRun = { passed: [], failed: [] };
  for (const { name, fn } of cases) {
    try {
      for (const hook of before) await hook();
      await fn();
      run.passed.push(name);
    } catch (error) {
      run.failed.push({ name, error: error instanceof Error ? error.message : String(error) });
    } finally {
      for (const hook of after) await hook();
    }
  }
  return run;
}

describe('describeIdempotencyStore, used as a third party would', () => {
  it('runs under any runner passed as `framework`, without Jest globals: every case of the example store passes', async () => {
    const run = await runContract(exampleStore, contractOptions);
    expect(run.failed).toEqual([]);
    expect(run.passed.length).toBeGreaterThanOrEqual(24);
    expect(run.passed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\[W4\] grants exactly one of 100 concurrent claims/),
        expect.stringMatching(/renew .* > answers false \(lease lost\) when the record was deleted behind its back/),
      ]),
    );
  });

  it('fails a store whose claim is not a conditional write (two deliveries both get the claim)', async () => {
    class UnconditionalTable extends ConditionalTable {
      override put(pk: string, record: RunRecordDocument): Promise<void> {
        return super.put(pk, record, () => true);
      }
    }
    const racy = (): ConditionalPutIdempotencyStore =>
      new ConditionalPutIdempotencyStore(new UnconditionalTable(), { now: () => now });
    const run = await runContract(racy, { elapse: contractOptions.elapse, watchList: false });
    expect(run.failed.map((f) => f.name)).toEqual(
      expect.arrayContaining([expect.stringMatching(/\[W4\] grants exactly one of 100 concurrent claims/)]),
    );
  });

  it('fails a store without renew on the renewal cases, naming the risk, unless renewal: false', async () => {
    const withoutRenew = (): IdempotencyStore => {
      const store = exampleStore();
      return {
        claim: (key, request) => store.claim(key, request),
        complete: (key, completion) => store.complete(key, completion),
        release: (key, release) => store.release(key, release),
      };
    };
    const strict = await runContract(withoutRenew, { elapse: contractOptions.elapse, watchList: false });
    expect(strict.failed.length).toBeGreaterThan(0);
    for (const failure of strict.failed) {
      expect(failure.name).toMatch(/renew \(lease renewal while a handler runs\)/);
      expect(failure.error).toMatch(
        /has no renew\(key, \{ slot, token, leaseMs \}\): a handler running past its lease may run twice/,
      );
    }
    const lenient = await runContract(withoutRenew, {
      elapse: contractOptions.elapse,
      renewal: false,
      watchList: false,
    });
    expect(lenient.failed).toEqual([]);
    expect(lenient.passed.some((name) => name.includes('renew'))).toBe(false);
  });

  it('without globals and without `framework`, refuses to register, naming the option', () => {
    const globals = globalThis as unknown as Record<string, unknown>;
    const saved = globals['it'];
    delete globals['it'];
    try {
      expect(() => describeIdempotencyStore('no runner', exampleStore)).toThrow(
        /^describeIdempotencyStore: `options\.framework` is needed when describe, it, beforeEach and afterEach are not globals/,
      );
    } finally {
      globals['it'] = saved;
    }
  });

  it('fails a store that lets a foreign token complete a claim', async () => {
    class Trusting extends ConditionalPutIdempotencyStore {
      override complete(key: string, completion: RunCompletion): Promise<void> {
        return this.takeOver(key, completion.slot).then((token) => super.complete(key, { ...completion, token }));
      }
      private async takeOver(key: string, slot: string): Promise<string> {
        const item = await this.tableOf().get(key);
        return item?.record.runs[slot]?.owner ?? '';
      }
      private tableOf(): ConditionalTable {
        return (this as unknown as { table: ConditionalTable }).table;
      }
    }
    const run = await runContract(() => new Trusting(new ConditionalTable(), { now: () => now }), {
      elapse: contractOptions.elapse,
      watchList: false,
    });
    expect(run.failed.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/ignores complete and release with a token that does not own the slot/),
      ]),
    );
  });
});
