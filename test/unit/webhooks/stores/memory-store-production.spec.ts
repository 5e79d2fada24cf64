import 'reflect-metadata';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  IdempotencyStore,
  MemoryIdempotencyStore,
  PaymentsConfigurationError,
  PaymentsModule,
  type PaymentsWebhooksOptions,
} from '../../../../lib/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

/** Stands in for a shared store (Redis, PostgreSQL, a third party's): any store that is not the in-memory one. */
class SharedStore implements IdempotencyStore {
  readonly #inner = new MemoryIdempotencyStore();
  claim: IdempotencyStore['claim'] = (key, request) => this.#inner.claim(key, request);
  complete: IdempotencyStore['complete'] = (key, completion) => this.#inner.complete(key, completion);
  release: IdempotencyStore['release'] = (key, release) => this.#inner.release(key, release);
  renew: NonNullable<IdempotencyStore['renew']> = (key, renewal) => this.#inner.renew(key, renewal);
}

let moduleRef: TestingModule | undefined;
let nodeEnv: string | undefined;
beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
beforeEach(() => {
  nodeEnv = process.env.NODE_ENV;
});
afterEach(async () => {
  if (nodeEnv === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = nodeEnv;
  await moduleRef?.close();
  moduleRef = undefined;
});

type Boot = (webhooks: Partial<PaymentsWebhooksOptions>) => Promise<TestingModule>;
const boots: [string, Boot][] = [
  [
    'forRoot',
    async (webhooks) => {
      moduleRef = await Test.createTestingModule({
        imports: [PaymentsModule.forRoot(fixtureOptions(webhooks))],
      }).compile();
      return moduleRef;
    },
  ],
  [
    'forRootAsync',
    async (webhooks) => {
      moduleRef = await Test.createTestingModule({
        imports: [PaymentsModule.forRootAsync({ useFactory: async () => fixtureOptions(webhooks) })],
      }).compile();
      return moduleRef;
    },
  ],
];

describe.each(boots)('the memory store in production (%s)', (_name, boot) => {
  it('refuses the default memory store when NODE_ENV=production, naming the option and the fix', async () => {
    process.env.NODE_ENV = 'production';
    const booting = boot({});
    await expect(booting).rejects.toThrow(PaymentsConfigurationError);
    await expect(booting).rejects.toThrow(/webhooks\.store.*NODE_ENV=production/s);
    await expect(booting).rejects.toThrow(
      /RedisIdempotencyStore.*PostgresIdempotencyStore.*allowMemoryStoreInProduction: true/s,
    );
  });

  it('refuses an explicit MemoryIdempotencyStore when NODE_ENV=production', async () => {
    process.env.NODE_ENV = 'production';
    await expect(boot({ store: new MemoryIdempotencyStore() })).rejects.toThrow(
      /a MemoryIdempotencyStore while NODE_ENV=production/,
    );
  });

  it('boots with the memory store in production when allowMemoryStoreInProduction is true', async () => {
    process.env.NODE_ENV = 'production';
    const ref = await boot({ allowMemoryStoreInProduction: true });
    expect(ref.get(IdempotencyStore)).toBeInstanceOf(MemoryIdempotencyStore);
  });

  it('boots in production with a store that is not the memory store', async () => {
    process.env.NODE_ENV = 'production';
    const store = new SharedStore();
    const ref = await boot({ store });
    expect(ref.get(IdempotencyStore)).toBe(store);
  });

  it('boots with the memory store when NODE_ENV is not production', async () => {
    process.env.NODE_ENV = 'test';
    const ref = await boot({});
    expect(ref.get(IdempotencyStore)).toBeInstanceOf(MemoryIdempotencyStore);
  });

  it('refuses an allowMemoryStoreInProduction that is not a boolean, naming it (in any environment)', async () => {
    process.env.NODE_ENV = 'development';
    await expect(boot({ allowMemoryStoreInProduction: 'yes' as unknown as boolean })).rejects.toThrow(
      /webhooks\.allowMemoryStoreInProduction.*must be a boolean/s,
    );
  });
});
