/*
 * The merchant app of the fault matrix (test/integration/postgres/fault-matrix): one transactional
 * handler writing one ledger row (a plain INSERT, no unique constraint) with the plain `pg` runner,
 * or through a @Transactional() service with TypeORM or Drizzle (@nestjs-cls/transactional), inline
 * or in queued mode (BullMQ). Its own process: the CLS packages cannot load in Jest, and some cells
 * SIGKILL it. The library is used as a merchant uses it; the faults come from outside it:
 *   - the idempotency store is wrapped (a Proxy over PostgresIdempotencyStore): before/after claim, complete;
 *   - the handler does what the cell asks (throw, abort the transaction, terminate its own backend
 *     from a second connection, SET LOCAL statement_timeout, a deferred trigger that fails COMMIT, a
 *     caught unique violation that turns COMMIT into ROLLBACK);
 *   - pg.Client's query is wrapped for the one backend a handler armed: COMMIT then the connection
 *     destroyed (committed, answer lost), or SIGKILL before/after COMMIT.
 * The cell is named in the event id (fault-codes.ts). Each fault fires once per event (recorded in
 * fault_fired, committed outside the transaction, so a restarted process does not fire it again).
 * Before a SIGKILL the app prints `killing <fault>`; a handler entering a slow statement prints `slow <id>`.
 *   PG_URL, ORM ('pg' | 'typeorm' | 'drizzle'), MODE ('inline' | 'queued'), SECRET, CLAIM_TTL_SECONDS,
 *   REDIS_URL, QUEUE_NAME, QUEUE_PREFIX (queued).
 */
import 'reflect-metadata';
import { writeSync } from 'node:fs';
import { Global, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import {
  OnPaymentEvent,
  PaymentsModule,
  PostgresIdempotencyStore,
  clsTransactionRunner,
  pgTransactionRunner,
  standardWebhooksVerifier,
  type PaymentEvent,
  type PaymentEventContext,
} from '../../../../lib/index.js';
import { type PaymentsTransaction } from '../../../../lib/webhooks/index.js';
import { faultOf } from './fault-codes.js';
import type { RunClaimRequest, RunCompletion } from '../../../../lib/webhooks/index.js';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const ORM = env('ORM', 'pg') as 'pg' | 'typeorm' | 'drizzle';
const MODE = env('MODE', 'inline') as 'inline' | 'queued';
const PG_URL = env('PG_URL');

const say = (line: string): void => {
  writeSync(1, `${line}\n`);
};
function kill(fault: string): never {
  say(`killing ${fault}`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}

// A pool with an 'error' listener (an idle connection ended by the server). Drizzle's node-postgres
// session checks a client out for its transaction without a listener of its own: a backend ended
// under it (pg_terminate_backend, a restart) would emit an unhandled 'error' and end the process, so
// every client gets one ('connect'). pgTransactionRunner and TypeORM attach theirs.
const pool = new pg.Pool({ connectionString: PG_URL, max: 10 });
pool.on('error', (error) => process.stderr.write(`pool error: ${error.message}\n`));
pool.on('connect', (client) => client.on('error', () => undefined));
// The app's second connection: records fired faults, terminates the handler's backend.
const admin = new pg.Pool({ connectionString: PG_URL, max: 3 });
admin.on('error', () => undefined);

/**
 * The cell's id in a store key (the event's, which its intent shares): a fault fires once per cell and
 * point, whichever record (the intent's, or the event's own) the store is called with.
 */
const cellOf = (key: string): string => /fa17[0-9a-f]{4}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}/.exec(key)?.[0] ?? key;

async function fireOnce(key: string): Promise<boolean> {
  const { rowCount } = await admin.query('INSERT INTO fault_fired (key) VALUES ($1) ON CONFLICT DO NOTHING', [key]);
  return rowCount === 1;
}
async function backendOf(tx: PaymentsTransaction): Promise<number> {
  const [row] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return Number(row!.pid);
}
async function terminate(tx: PaymentsTransaction): Promise<void> {
  const pid = await backendOf(tx);
  await admin.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
}

/** Backends whose next COMMIT a handler armed: 'lost' (commit, then the connection breaks), or a SIGKILL. */
const armed = new Map<number, 'lost' | 'kill-at-commit' | 'kill-after-commit'>();
type AnyQuery = (this: pg.Client, ...args: unknown[]) => unknown;
const clientQuery = pg.Client.prototype.query as unknown as AnyQuery;
(pg.Client.prototype as unknown as { query: AnyQuery }).query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string } | undefined;
  const text = typeof first === 'string' ? first : first?.text;
  const pid = (this as unknown as { processID?: number }).processID;
  const mode = pid === undefined ? undefined : armed.get(pid);
  if (mode === undefined || typeof text !== 'string' || !/^\s*commit\s*;?\s*$/i.test(text)) {
    return clientQuery.apply(this, args);
  }
  armed.delete(pid!);
  const callback =
    typeof args[args.length - 1] === 'function' ? (args.pop() as (e: unknown, r?: unknown) => void) : undefined;
  const outcome = (async () => {
    if (mode === 'kill-at-commit') kill(mode);
    await (clientQuery.apply(this, args) as Promise<unknown>);
    if (mode === 'kill-after-commit') kill(mode);
    // Committed on the server; the app never hears it: the socket breaks under the answer.
    (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    throw new Error('Connection terminated unexpectedly (injected after COMMIT)');
  })();
  if (callback === undefined) return outcome;
  outcome.then(
    (result) => callback(null, result),
    (error: unknown) => callback(error),
  );
  return undefined;
};

/** PostgresIdempotencyStore with faults before and after the claim, and at complete (after COMMIT). */
function faultyStore(): PostgresIdempotencyStore {
  const inner = new PostgresIdempotencyStore(pool);
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'claim') {
        return async (key: string, request: RunClaimRequest) => {
          const fault = faultOf(key);
          if (fault === 'before-claim' && (await fireOnce(`${cellOf(key)}:claim`))) {
            throw new Error('injected: store unavailable before the claim');
          }
          if (fault === 'kill-before-claim' && (await fireOnce(`${cellOf(key)}:claim`))) kill(fault);
          const claim = await target.claim(key, request);
          if (fault === 'kill-after-claim' && claim.status === 'claimed' && (await fireOnce(`${cellOf(key)}:claim`)))
            kill(fault);
          return claim;
        };
      }
      if (prop === 'complete') {
        return async (key: string, completion: RunCompletion) => {
          if (faultOf(key) === 'after-commit' && (await fireOnce(`${cellOf(key)}:complete`))) {
            throw new Error('injected: store unavailable after COMMIT');
          }
          return target.complete(key, completion);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The inbox's own first statement of the transaction: 'after-claim' terminates the backend just before it. */
function faultyRunner(inner: ReturnType<typeof pgTransactionRunner>): ReturnType<typeof pgTransactionRunner> {
  return {
    run: (work) =>
      inner.run((tx) => {
        let first = true;
        return work(
          Object.freeze({
            client: tx.client,
            async query<R extends Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]> {
              if (first) {
                first = false;
                const key = params?.[0];
                if (faultOf(key) === 'after-claim' && (await fireOnce(`${cellOf(String(key))}:inbox`)))
                  await terminate(tx);
              }
              return tx.query<R>(text, params);
            },
          }),
        );
      }),
  };
}

let record: (ctx: PaymentEventContext, eventId: string) => Promise<void> = async (ctx, eventId) => {
  await ctx.transaction!.query('INSERT INTO ledger (event_id, handler, amount) VALUES ($1, $2, 100)', [
    eventId,
    'credit',
  ]);
};

const sqlState = (error: unknown): unknown => {
  const e = error as { code?: unknown; driverError?: { code?: unknown }; cause?: { code?: unknown } } | null;
  return e?.code ?? e?.driverError?.code ?? e?.cause?.code;
};

@Injectable()
class FaultHandlers {
  @OnPaymentEvent('payment_intent.succeeded', { transactional: true })
  async credit(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    const tx = ctx.transaction!;
    await record(ctx, event.id);
    const fault = faultOf(event.id);
    if (fault === 'slow') {
      say(`slow ${event.id}`);
      await tx.query('SELECT pg_sleep(2)');
      return;
    }
    const handlerFaults: Array<string | undefined> = [
      'throw',
      'sql-abort',
      'terminate',
      'timeout',
      'commit-error',
      'commit-rollback',
      'commit-lost',
    ];
    const killFaults = ['kill-in-handler', 'kill-at-commit', 'kill-after-commit'];
    if (fault === undefined || ![...handlerFaults, ...killFaults].includes(fault)) return;
    if (!(await fireOnce(`${event.id}:handler`))) return;
    switch (fault) {
      case 'throw':
        throw new Error('injected: the handler throws');
      case 'sql-abort':
        try {
          await tx.query('SELECT 1 / 0');
        } catch {
          // caught: PostgreSQL has aborted the transaction; the next statement fails (25P02)
        }
        await tx.query('SELECT 1');
        return;
      case 'terminate':
        await terminate(tx);
        await tx.query('SELECT 1');
        return;
      case 'timeout':
        await tx.query("SET LOCAL statement_timeout = '100ms'");
        await tx.query('SELECT pg_sleep(5)');
        return;
      case 'commit-error':
        await tx.query('INSERT INTO commit_guard (event_id) VALUES ($1)', [event.id]);
        return;
      case 'commit-rollback':
        await tx.query('INSERT INTO uniq (id) VALUES ($1)', [event.id]);
        try {
          await tx.query('INSERT INTO uniq (id) VALUES ($1)', [event.id]);
        } catch (error) {
          if (sqlState(error) !== '23505') throw error;
          // "already there": the merchant moves on, but the transaction is aborted
        }
        return;
      case 'commit-lost':
        armed.set(await backendOf(tx), 'lost');
        return;
      case 'kill-in-handler':
        kill(fault);
        break;
      default:
        armed.set(await backendOf(tx), fault as 'kill-at-commit' | 'kill-after-commit');
    }
  }
}

const DB = Symbol('DB');

async function clsImports(): Promise<DynamicModule[]> {
  const { ClsModule } = await import('nestjs-cls');
  const transactional = await import('@nestjs-cls/transactional');
  let dbInstance: unknown;
  let adapter: unknown;
  let insert: (eventId: string) => Promise<void>;
  const host = () => transactional.TransactionHost.getInstance() as unknown as { tx: never };
  if (ORM === 'typeorm') {
    const { DataSource, EntitySchema } = await import('typeorm');
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
    insert = async (eventId) => {
      const tx = host().tx as { getRepository(e: unknown): { insert(row: object): Promise<unknown> } };
      await tx.getRepository(Ledger).insert({ event_id: eventId, handler: 'credit', amount: 100 });
    };
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
    insert = async (eventId) => {
      const tx = host().tx as { insert(t: unknown): { values(v: object): Promise<unknown> } };
      await tx.insert(ledger).values({ eventId, handler: 'credit', amount: 100 });
    };
  }
  // The merchant's service method: @Transactional(), writing through txHost.tx (joins the inbox's transaction).
  class LedgerService {
    async credit(eventId: string): Promise<void> {
      await insert(eventId);
    }
  }
  transactional.Transactional()(
    LedgerService.prototype,
    'credit',
    Object.getOwnPropertyDescriptor(LedgerService.prototype, 'credit')!,
  );
  const service = new LedgerService();
  record = async (ctx, eventId) => {
    if (host().tx !== ctx.transaction?.client) throw new Error('the ORM write did not join the inbox transaction');
    await service.credit(eventId);
  };
  @Global()
  @Module({ providers: [{ provide: DB, useValue: dbInstance }], exports: [DB] })
  class DatabaseModule {}
  return [
    ClsModule.forRoot({
      global: true,
      middleware: { mount: ORM === 'typeorm' },
      plugins: [new transactional.ClsPluginTransactional({ imports: [DatabaseModule], adapter: adapter as never })],
    }) as DynamicModule,
  ];
}

async function main(): Promise<void> {
  const imports = ORM === 'pg' ? [] : await clsImports();
  const runner = ORM === 'pg' ? pgTransactionRunner(pool) : clsTransactionRunner({ orm: ORM });
  const queue =
    MODE === 'queued'
      ? {
          processing: {
            queue: {
              connection: { url: env('REDIS_URL', 'redis://127.0.0.1:6379') },
              name: env('QUEUE_NAME'),
              prefix: env('QUEUE_PREFIX'),
              // Retries span more than claimTtlSeconds: a claim left behind (its release failed while
              // PostgreSQL restarted) answers busy until it expires.
              attempts: 10,
              backoff: { type: 'fixed' as const, delay: 500 },
              concurrency: 4,
              lockDurationMs: 2000,
              stalledIntervalMs: 1000,
            },
          },
        }
      : {};
  @Module({
    imports: [
      ...imports,
      PaymentsModule.forRoot({
        apiKey: 'sk_test_fault_merchant',
        environment: 'sandbox',
        baseUrl: 'http://127.0.0.1:9',
        allowInsecureHttp: true,
        webhooks: {
          verifier: standardWebhooksVerifier({ secrets: env('SECRET') }),
          requireHttps: false,
          claimTtlSeconds: Number(env('CLAIM_TTL_SECONDS', '2')),
          store: faultyStore(),
          transactions: { runner: faultyRunner(runner) },
          ...queue,
        },
      }),
    ],
    providers: [FaultHandlers],
  })
  class FaultMerchantModule {}
  const app = await NestFactory.create(FaultMerchantModule, { rawBody: true, logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  say(`listening ${address.port}`);
  process.on('SIGTERM', () => {
    void app.close().then(async () => {
      await Promise.all([pool.end(), admin.end()]);
      process.exit(0);
    });
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`fault merchant failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
