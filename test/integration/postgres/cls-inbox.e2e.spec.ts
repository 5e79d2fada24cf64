import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CURRENT_SECRET, post, sign } from '../../fixtures/webhooks/webhook-app.fixture.js';
import { createTestDatabase, type TestDatabase } from './postgres-test.util.js';
import { INBOX_KEY_OF, inboxKeys } from './pg-inbox.fixture.js';
import {
  buildInboxApps,
  startMerchant,
  stopMerchant,
  type InboxAppsBuild,
  type MerchantProcess,
} from './support/inbox-apps.js';

/*
 * @nestjs-cls/transactional with TypeORM and with Drizzle. The merchant's code is written for CLS as it
 * would be without this package: a service method with @Transactional() writing through txHost.tx (a
 * TypeORM repository insert, a Drizzle insert); the handler calls it (test/integration/postgres/apps).
 * The app runs in its own Node process: @nestjs-cls/* are CommonJS packages requiring the ESM-only
 * Nest 12, which Node loads but Jest's module registry cannot.
 *
 * Proof that the service joins the inbox transaction: the handler checks txHost.tx is ctx.transaction's
 * client (it throws otherwise: 500), a throw after the service's own @Transactional() returned leaves
 * no row, and copies never add a second row.
 */

let build: InboxAppsBuild;
beforeAll(() => {
  build = buildInboxApps();
});
afterAll(() => {
  build?.remove();
});

describe.each([
  ['typeorm', 'typeorm', /^typeorm 0\.3\./m],
  ['typeorm', 'typeorm-1', /^typeorm 1\./m],
  ['drizzle', '', undefined],
] as const)(
  '@nestjs-cls/transactional with %s %s (real PostgreSQL, own process)',
  (orm, typeormPackage, typeormVersion) => {
    let db: TestDatabase;
    let merchant: MerchantProcess;

    const ledger = async (eventId: string): Promise<Record<string, number>> => {
      const rows = (
        await db.pool.query('SELECT handler, count(*)::int AS n FROM ledger WHERE event_id = $1 GROUP BY handler', [
          eventId,
        ])
      ).rows;
      return Object.fromEntries(rows.map((r) => [r['handler'] as string, r['n'] as number]));
    };

    beforeAll(async () => {
      db = await createTestDatabase(`cls_${orm}`);
      merchant = await startMerchant(build.main, {
        PG_URL: db.url,
        ORM: orm,
        MODE: 'inbox',
        SECRET: CURRENT_SECRET,
        ...(typeormPackage ? { TYPEORM_PACKAGE: typeormPackage } : {}),
      });
    }, 90_000);
    afterAll(async () => {
      await stopMerchant(merchant);
      await db?.drop();
    });

    if (typeormVersion) {
      it('runs on the TypeORM major it names', () => {
        expect(merchant.stdout()).toMatch(typeormVersion);
      });
    }

    it('commits the @Transactional() service writes with their completion records (200); a redelivery adds nothing', async () => {
      const event = createPaymentEvent('payment_intent.succeeded');
      expect((await post(merchant.url, sign(event))).status).toBe(200);
      expect(await ledger(event.id)).toEqual({ credit: 1, ship: 1 });
      expect((await post(merchant.url, sign(event))).status).toBe(200);
      expect(await ledger(event.id)).toEqual({ credit: 1, ship: 1 });
      const inbox = await db.pool.query(
        `SELECT count(*)::int AS n FROM payments_inbox WHERE ${INBOX_KEY_OF}`,
        inboxKeys(event),
      );
      expect(inbox.rows[0]!['n']).toBe(2);
    });

    it('rolls back the service writes when the handler throws after them (500); the redelivery writes each once', async () => {
      const event = createPaymentEvent('payment_intent.succeeded', { metadata: { fail: 'once' } });
      expect((await post(merchant.url, sign(event))).status).toBe(500);
      expect(await ledger(event.id)).toEqual({});
      expect((await post(merchant.url, sign(event))).status).toBe(200);
      expect(await ledger(event.id)).toEqual({ credit: 1, ship: 1 });
    });

    it('[W4] runs each handler once for 10 concurrent copies (the others get 409 or 200), one row each', async () => {
      const event = createPaymentEvent('payment_intent.succeeded');
      const answers = await Promise.all(Array.from({ length: 10 }, () => post(merchant.url, sign(event))));
      expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
      expect((await post(merchant.url, sign(event))).status).toBe(200);
      expect(await ledger(event.id)).toEqual({ credit: 1, ship: 1 });
    });
  },
);
