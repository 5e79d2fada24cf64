import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PostgresIdempotencyStore, postgresIdempotencyStoreSchema } from '../../../lib/webhooks/index.js';
import { paymentsInboxSql } from '../../../lib/webhooks/transactional/payments-inbox.sql.js';
import { createTestDatabase, type TestDatabase } from './postgres-test.util.js';

/*
 * Issue 40: the store formats changed once, and PostgreSQL users of 0.1.0 get a migration statement in
 * the docs. This runs the docs' own SQL blocks (docs/custom-store.md, docs/exactly-once.md) on tables in
 * 0.1.0's layout, then the store and the inbox of today on what they left.
 */
const sqlBlockAfter = (doc: string, heading: string): string => {
  const text = readFileSync(new URL(`../../../docs/${doc}`, import.meta.url), 'utf8');
  const section = text.slice(text.indexOf(heading));
  const match = /```sql\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error(`no sql block after ${heading} in docs/${doc}`);
  return match[1]!;
};

/** 0.1.0's tables, as its store, watch list and inbox created them. */
const SCHEMA_010 = `
CREATE TABLE payments_idempotency (key text PRIMARY KEY, owner uuid, lease_until timestamptz, attempt integer NOT NULL,
  done boolean NOT NULL DEFAULT false, expires_at timestamptz NOT NULL);
CREATE INDEX payments_idempotency_expires_at_idx ON payments_idempotency (expires_at);
CREATE TABLE payments_watched_intents (id text PRIMARY KEY, kind text NOT NULL, created_at_ms bigint NOT NULL,
  next_check_ms bigint NOT NULL, checks integer NOT NULL DEFAULT 0);
CREATE TABLE payments_watched_intents_lease (name text PRIMARY KEY, owner text NOT NULL, until timestamptz NOT NULL);
CREATE TABLE payments_inbox (key text PRIMARY KEY, completed_at timestamptz NOT NULL, expires_at timestamptz NOT NULL);`;

const SLOT = (state: string, handler: string) => ({ slot: `${state}|${handler}`, leaseMs: 60_000 });

describe('upgrading a PostgreSQL database of 0.1.0 with the docs’ statements', () => {
  let db: TestDatabase;
  const [paid, cancelled, named, watched, failed] = [
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
  ];
  const [chargeEvent, intentEvent] = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    db = await createTestDatabase('upgrade_010');
    await db.pool.query(SCHEMA_010);
    const later = "now() + interval '2 days'";
    await db.pool.query(
      `INSERT INTO payments_idempotency (key, owner, attempt, done, expires_at) VALUES
        ('payment_intent:${paid}:succeeded:Shop.paid', NULL, 1, true, ${later}),
        ('${intentEvent}:Shop.paid', NULL, 1, true, ${later}),
        ('payment_intent:${cancelled}:cancelled:seen:Shop.released', NULL, 1, true, ${later}),
        ('eu:payment_intent:${named}:succeeded:Shop.paid', NULL, 1, true, ${later}),
        ('${chargeEvent}:Ledger.charge', NULL, 1, true, ${later}),
        ('payment_intent:${failed}:succeeded:Shop.paid', gen_random_uuid(), 2, false, ${later})`,
    );
    await db.pool.query(
      `INSERT INTO payments_watched_intents VALUES ($1, 'payment_intent', 1000, 5000, 0), ($2, 'setup_intent', 1000, 7000, 3)`,
      [watched, failed],
    );
    await db.pool.query(
      `INSERT INTO payments_inbox VALUES
        ('payment_intent:${paid}:succeeded:Shop.paid', now(), ${later}),
        ('${chargeEvent}:Ledger.charge', now(), ${later})`,
    );
  });
  afterAll(async () => db.drop());

  it('refuses the 0.1.0 table by name before the migration, writing nothing', async () => {
    const store = new PostgresIdempotencyStore(db.pool);
    await expect(store.claim(`i:${paid}`, SLOT('succeeded', 'Shop.paid'))).rejects.toThrow(
      /layout of nestjs-payments 0\.1\.0/,
    );
  });

  it('keeps what 0.1.0 recorded: handled states done, events done, watched intents watched, the rest new', async () => {
    const steps = sqlBlockAfter('custom-store.md', '## Upgrading from 0.1.0');
    // The docs' block, with the new layout run where its comment says.
    const [first, rest] = steps.split(/^COMMIT;$/m) as [string, string];
    await db.pool.query(`${first}\n${postgresIdempotencyStoreSchema()};\nCOMMIT;`);
    await db.pool.query(rest);

    const store = new PostgresIdempotencyStore(db.pool);
    const webhook = (id: string) => randomUUID().replace(/^.{8}/, id.slice(0, 8));
    expect(await store.claim(`i:${paid}`, { ...SLOT('succeeded', 'Shop.paid'), eventId: webhook(paid) })).toEqual({
      status: 'done',
    });
    expect(await store.claim(`i:${cancelled}`, SLOT('cancelled', 'Shop.released'))).toEqual({ status: 'done' });
    expect(await store.claim(`eu:i:${named}`, SLOT('succeeded', 'Shop.paid'))).toEqual({ status: 'done' });
    expect(
      await store.claim(`e:${chargeEvent}`, { slot: 'Ledger.charge', eventId: chargeEvent, leaseMs: 60_000 }),
    ).toEqual({
      status: 'done',
    });
    // Never completed in 0.1.0: runs now.
    expect(await store.claim(`i:${failed}`, SLOT('succeeded', 'Shop.paid'))).toMatchObject({ status: 'claimed' });
    const due = await store.intentWatchStore().due(10_000, 10);
    expect(due.map((intent) => [intent.id, intent.kind, intent.checks]).sort()).toEqual(
      [
        [watched, 'payment_intent', 0],
        [failed, 'setup_intent', 3],
      ].sort(),
    );
    const old = await db.pool.query(`SELECT to_regclass('payments_watched_intents') AS t`);
    expect(old.rows[0]!['t']).toBeNull();
  });

  it("migrates the inbox in place: a committed run's row says so to today's inbox statement", async () => {
    await db.pool.query(sqlBlockAfter('exactly-once.md', '### Upgrading from 0.1.0'));
    const { rows } = await db.pool.query('SELECT key, done FROM payments_inbox ORDER BY key');
    expect(rows).toEqual(
      [
        { key: `e:${chargeEvent}/Ledger.charge`, done: [chargeEvent] },
        { key: `i:${paid}/succeeded|Shop.paid`, done: ['*'] },
      ].sort((a, b) => (a.key < b.key ? -1 : 1)),
    );
    const claim = paymentsInboxSql('payments_inbox').claim;
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const runs = async (key: string, event: string) =>
        (await client.query(claim, [key, event, 60_000, randomUUID(), false])).rows[0]?.['runs'];
      expect(await runs(`i:${paid}/succeeded|Shop.paid`, randomUUID())).toBe(false);
      expect(await runs(`e:${chargeEvent}/Ledger.charge`, chargeEvent)).toBe(false);
      expect(await runs(`i:${failed}/succeeded|Shop.paid`, randomUUID())).toBe(true);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });
});
