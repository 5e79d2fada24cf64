/*
 * A merchant app for the PostgreSQL suites that need their own process: `@nestjs-cls/transactional`
 * is CommonJS requiring the ESM-only Nest 12, which Node loads (require(esm)) but Jest's module
 * registry cannot; and the chaos part SIGKILLs whole processes. Configured by environment:
 *   PG_URL      database of the ledger and the inbox
 *   ORM         'pg' (ctx.transaction), 'typeorm' or 'drizzle' (@Transactional() service via CLS)
 *   MODE        'inbox' (transactional handlers) or 'redis' (RedisIdempotencyStore, handlers not transactional)
 *   REDIS_URL, REDIS_PREFIX   for MODE=redis
 *   SECRET      the Standard Webhooks secret
 *   KILL        e.g. 'in-handler:0.05,before-commit:0.05,after-commit:0.05' (probability per point, chaos)
 *   SEED        seed of the kill decisions
 *   STORE       'postgres': PostgresIdempotencyStore on the same pool; 'redis': RedisIdempotencyStore (claims and
 *               the watch list in Redis) with MODE=inbox (the effects still in the inbox's transaction);
 *               else the memory store, or Redis with MODE=redis
 *   TYPEORM_PACKAGE  'typeorm' (0.3, default) or 'typeorm-1' (1.x)
 *   POOL_MAX    size of the pool (default 10)
 *   NO_POOL_LISTENER  '1': the app attaches no pool 'error' listener of its own
 *   RECONCILE   '1': webhooks.reconcile on (due at once, swept every second), POST /orders creates a
 *               payment intent through PaymentsService, and the ledger keys rows by intent id
 *   BASE_URL, API_KEY   the payment service (the simulator) for RECONCILE
 * Prints `listening <port>` once ready. Handler failures a test asks for: event metadata.fail = 'once'.
 */
import 'reflect-metadata';
import { Controller, Global, Injectable, Module, Post, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import {
  OnPaymentEvent,
  PaymentsModule,
  PaymentsService,
  PostgresIdempotencyStore,
  RedisIdempotencyStore,
  clsTransactionRunner,
  pgTransactionRunner,
  standardWebhooksVerifier,
  type PaymentEvent,
  type PaymentEventContext,
  type PaymentsTransactionRunner,
} from '../../../../lib/index.js';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

const ORM = env('ORM', 'pg') as 'pg' | 'typeorm' | 'drizzle';
const MODE = env('MODE', 'inbox') as 'inbox' | 'redis';
const SECRET = env('SECRET');
const PG_URL = env('PG_URL');
const RECONCILE = process.env['RECONCILE'] === '1';

/** RECONCILE: the shop's checkout, creating the intent through PaymentsService (so it is watched). */
@Controller('orders')
class OrdersController {
  constructor(private readonly payments: PaymentsService) {}
  @Post()
  async create(): Promise<{ id: string; embed_token: unknown }> {
    const intent = await this.payments.paymentIntents.create({ amount: 100 });
    return { id: intent.id, embed_token: intent['embed_token'] };
  }
}

/** Seeded kill points: the process SIGKILLs itself at the chosen moments of a delivery. */
const killOdds = new Map(
  (process.env['KILL'] ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const [point, odds] = pair.split(':');
      return [point!, Number(odds)] as const;
    }),
);
let seed = Number(process.env['SEED'] ?? '1') >>> 0 || 1;
const random = (): number => {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 0x1_0000_0000;
};
function maybeKill(point: string): void {
  const odds = killOdds.get(point);
  if (odds !== undefined && random() < odds) process.kill(process.pid, 'SIGKILL');
}

const pool = new pg.Pool({ connectionString: PG_URL, max: Number(process.env['POOL_MAX'] ?? '10') });
// NO_POOL_LISTENER=1: the app forgot `pool.on('error')`; the store and the runner must keep it alive.
if (process.env['NO_POOL_LISTENER'] !== '1') pool.on('error', () => undefined);

const DB = Symbol('DB');

/** The merchant's ledger: plain INSERTs, no unique constraint, no conditional update. */
@Injectable()
class LedgerWriter {
  // Loaded lazily: only the CLS apps need them.
  txHost: { tx: unknown } | undefined;
  drizzleTable: unknown;

  async insert(ctx: PaymentEventContext, eventId: string, handler: string): Promise<void> {
    if (MODE === 'redis') {
      await pool.query('INSERT INTO ledger (event_id, handler, amount) VALUES ($1, $2, 100)', [eventId, handler]);
      return;
    }
    if (ORM === 'pg') {
      await ctx.transaction!.query('INSERT INTO ledger (event_id, handler, amount) VALUES ($1, $2, 100)', [
        eventId,
        handler,
      ]);
      return;
    }
    await clsRecord!(eventId, handler);
  }
}

let clsRecord: ((eventId: string, handler: string) => Promise<void>) | undefined;
let sameTx: (ctx: PaymentEventContext) => boolean = () => true;

@Injectable()
class MerchantHandlers {
  constructor(private readonly ledger: LedgerWriter) {}

  @OnPaymentEvent('payment_intent.succeeded', { transactional: MODE === 'inbox' })
  async credit(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    await this.run('credit', event, ctx);
  }

  @OnPaymentEvent('payment_intent.succeeded', { transactional: MODE === 'inbox' })
  async ship(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    await this.run('ship', event, ctx);
  }

  private async run(handler: string, event: PaymentEvent, ctx: PaymentEventContext): Promise<void> {
    // RECONCILE: a reconciled event has no id; rows are keyed by the intent, which both paths name.
    const key = RECONCILE ? String((event.data as { payment_intent?: { id?: unknown } }).payment_intent?.id) : event.id;
    await this.ledger.insert(ctx, key, handler);
    if (!sameTx(ctx)) throw new Error('the ORM write did not join the inbox transaction');
    maybeKill('in-handler');
    const fail = (event.metadata as Record<string, unknown> | null)?.['fail'];
    if (fail === 'always' || (fail === 'once' && ctx.deliveryAttempt === 1)) throw new Error('asked to fail');
  }
}

/** Wraps a runner with the chaos kill points around the commit. */
function withKillPoints(inner: PaymentsTransactionRunner): PaymentsTransactionRunner {
  return {
    async run(work) {
      const result = await inner.run(async (tx) => {
        const value = await work(tx);
        maybeKill('before-commit');
        return value;
      });
      maybeKill('after-commit');
      return result;
    },
  };
}

async function clsImports(): Promise<{ imports: DynamicModule[]; providers: unknown[] }> {
  const { ClsModule } = await import('nestjs-cls');
  const transactional = await import('@nestjs-cls/transactional');
  let dbInstance: unknown;
  let adapter: unknown;
  if (ORM === 'typeorm') {
    // TYPEORM_PACKAGE=typeorm-1: TypeORM 1.x (a devDependency alias); the CLS adapter uses typeorm's types only.
    const typeormPackage = process.env['TYPEORM_PACKAGE'] ?? 'typeorm';
    const { DataSource, EntitySchema } = (await import(typeormPackage)) as typeof import('typeorm');
    const { readFileSync } = await import('node:fs');
    const manifest = `${process.cwd()}/node_modules/${typeormPackage}/package.json`; // not in typeorm's exports map
    const typeormVersion = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    process.stdout.write(`typeorm ${typeormVersion}\n`);
    const Ledger = new EntitySchema({
      name: 'ledger',
      tableName: 'ledger',
      columns: {
        id: { type: 'bigint', primary: true, generated: 'increment' },
        event_id: { type: 'text' },
        handler: { type: 'text' },
        amount: { type: 'integer' },
      },
    });
    dbInstance = await new DataSource({ type: 'postgres', url: PG_URL, entities: [Ledger], poolSize: 10 }).initialize();
    const { TransactionalAdapterTypeOrm } = await import('@nestjs-cls/transactional-adapter-typeorm');
    adapter = new TransactionalAdapterTypeOrm({ dataSourceToken: DB });
    // The merchant's existing service method: @Transactional(), writing through txHost.tx.
    class Service {
      constructor(readonly txHost: { tx: { getRepository(e: unknown): { insert(row: object): Promise<unknown> } } }) {}
      async record(eventId: string, handler: string): Promise<void> {
        await this.txHost.tx.getRepository(Ledger).insert({ event_id: eventId, handler, amount: 100 });
      }
    }
    transactional.Transactional()(
      Service.prototype,
      'record',
      Object.getOwnPropertyDescriptor(Service.prototype, 'record')!,
    );
    const host = () => transactional.TransactionHost.getInstance() as unknown as { tx: never };
    clsRecord = (eventId, handler) => new Service(host()).record(eventId, handler);
    sameTx = (ctx) => host().tx === ctx.transaction?.client;
  } else {
    const { drizzle } = await import('drizzle-orm/node-postgres');
    const { pgTable, bigserial, text, integer } = await import('drizzle-orm/pg-core');
    const ledger = pgTable('ledger', {
      id: bigserial('id', { mode: 'number' }).primaryKey(),
      eventId: text('event_id').notNull(),
      handler: text('handler').notNull(),
      amount: integer('amount').notNull(),
    });
    dbInstance = drizzle(pool);
    const { TransactionalAdapterDrizzleOrm } = await import('@nestjs-cls/transactional-adapter-drizzle-orm');
    adapter = new TransactionalAdapterDrizzleOrm({ drizzleInstanceToken: DB });
    class Service {
      constructor(readonly txHost: { tx: { insert(t: unknown): { values(v: object): Promise<unknown> } } }) {}
      async record(eventId: string, handler: string): Promise<void> {
        await this.txHost.tx.insert(ledger).values({ eventId, handler, amount: 100 });
      }
    }
    transactional.Transactional()(
      Service.prototype,
      'record',
      Object.getOwnPropertyDescriptor(Service.prototype, 'record')!,
    );
    const host = () => transactional.TransactionHost.getInstance() as unknown as { tx: never };
    clsRecord = (eventId, handler) => new Service(host()).record(eventId, handler);
    sameTx = (ctx) => host().tx === ctx.transaction?.client;
  }
  @Global()
  @Module({ providers: [{ provide: DB, useValue: dbInstance }], exports: [DB] })
  class DatabaseModule {}
  return {
    imports: [
      ClsModule.forRoot({
        global: true,
        middleware: { mount: ORM === 'typeorm' },
        plugins: [new transactional.ClsPluginTransactional({ imports: [DatabaseModule], adapter: adapter as never })],
      }) as DynamicModule,
    ],
    providers: [],
  };
}

async function main(): Promise<void> {
  await pool.query(
    'CREATE TABLE IF NOT EXISTS ledger (id bigserial PRIMARY KEY, event_id text NOT NULL, handler text NOT NULL, amount integer NOT NULL)',
  );
  const cls = MODE === 'inbox' && ORM !== 'pg' ? await clsImports() : { imports: [], providers: [] };
  let store: RedisIdempotencyStore | PostgresIdempotencyStore | undefined;
  let redis: { quit(): Promise<unknown> } | undefined;
  if (process.env['STORE'] === 'postgres') store = new PostgresIdempotencyStore(pool);
  if (MODE === 'redis' || process.env['STORE'] === 'redis') {
    const { Redis } = await import('ioredis');
    const client = new Redis(env('REDIS_URL', 'redis://127.0.0.1:6379'));
    redis = client;
    store = new RedisIdempotencyStore(client, { keyPrefix: env('REDIS_PREFIX') });
  }
  const runner = ORM === 'pg' ? pgTransactionRunner(pool) : clsTransactionRunner({ orm: ORM });
  @Module({
    imports: [
      ...cls.imports,
      PaymentsModule.forRoot({
        apiKey: env('API_KEY', 'sk_test_inbox_merchant'),
        environment: 'sandbox',
        baseUrl: env('BASE_URL', 'http://127.0.0.1:9'),
        allowInsecureHttp: true,
        webhooks: {
          verifier: standardWebhooksVerifier({ secrets: SECRET }),
          requireHttps: false,
          claimTtlSeconds: Number(process.env['CLAIM_TTL_SECONDS'] ?? '300'),
          ...(store ? { store } : {}),
          ...(MODE === 'inbox' ? { transactions: { runner: withKillPoints(runner) } } : {}),
          deliveryListener: { onDispatch: () => maybeKill('after-commit') },
          ...(RECONCILE
            ? {
                reconcile: {
                  afterSeconds: 1,
                  everySeconds: 1,
                  cadence: [{ untilAgeSeconds: 3600, everySeconds: 1 }],
                  maxRetrievesPerSecond: 200,
                  batchSize: 500,
                },
              }
            : {}),
        },
      }),
    ],
    providers: [LedgerWriter, MerchantHandlers],
    controllers: RECONCILE ? [OrdersController] : [],
  })
  class InboxMerchantModule {}
  const app = await NestFactory.create(InboxMerchantModule, { rawBody: true, logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env['PORT'] ?? '0'), '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  process.stdout.write(`listening ${address.port}\n`);
  process.on('SIGTERM', () => {
    void app.close().then(async () => {
      await redis?.quit();
      await pool.end();
      process.exit(0);
    });
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`inbox merchant failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
