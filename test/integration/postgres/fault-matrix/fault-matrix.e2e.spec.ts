import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { paymentsInboxSchema } from '../../../../lib/webhooks/index.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { CURRENT_SECRET, post, sign } from '../../../fixtures/webhooks/webhook-app.fixture.js';
import { REDIS_URL } from '../../redis-test.util.js';
import { faultEventId } from '../apps/fault-codes.js';
import { buildInboxApps, type InboxAppsBuild } from '../support/inbox-apps.js';
import { FAULT_ROWS, type FaultRow } from './fault-cells.js';
import { FaultApp } from './fault-app.js';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';
import { renderMatrix, type CellResult } from './fault-report.js';

/*
 * The fault matrix of issue 23: one fault at each point of a delivery (fault-cells.ts), for each
 * runner (plain pg, TypeORM and Drizzle through @nestjs-cls/transactional) in inline and queued mode,
 * against a private PostgreSQL 15 cluster (some cells restart it) and the local Redis (queued mode,
 * a queue prefix of its own). Checked per cell:
 *   - a 2xx answer (inline) or a completed job (queued) only with the ledger row and the inbox row committed;
 *   - redeliveries end in exactly one committed ledger row (plain INSERT, no unique constraint) and one inbox row;
 *   - nothing stays leased: a later delivery runs (a killed claim expires after claimTtlSeconds = 2);
 *   - no crash and no unhandled rejection (the app process stays up), except the injected SIGKILL,
 *     after which a restarted process finishes the job;
 *   - the fault really fired (recorded by the app) and a SIGKILL happened at its point (announced on stdout).
 * The table of the run goes to $FAULT_MATRIX_OUT (default <tmpdir>/payments-fault-matrix.md).
 */

const RUNNERS = ['pg', 'typeorm', 'drizzle'] as const;
const MODES = ['inline', 'queued'] as const;
const CLAIM_TTL_SECONDS = 2;
const SCHEMA = `
CREATE TABLE ledger (id bigserial PRIMARY KEY, event_id text NOT NULL, handler text NOT NULL, amount integer NOT NULL);
CREATE TABLE fault_fired (key text PRIMARY KEY);
CREATE TABLE uniq (id text PRIMARY KEY);
CREATE TABLE commit_guard (event_id text NOT NULL);
CREATE FUNCTION commit_guard_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'injected: refused at COMMIT'; END $$;
CREATE CONSTRAINT TRIGGER commit_guard_refuse AFTER INSERT ON commit_guard
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION commit_guard_refuse();`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
const is2xx = (status: number) => status >= 200 && status < 300;
const cellKey = (runner: string, mode: string, fault: string) => `${runner}/${mode}/${fault}`;

interface Column {
  runner: (typeof RUNNERS)[number];
  mode: (typeof MODES)[number];
  app: FaultApp;
  db: pg.Pool;
  queue?: Queue;
}

let build: InboxAppsBuild | undefined;
let postgres: PrivatePostgres | undefined;
const columns: Column[] = [];
const results = new Map<string, CellResult>();
let durationMs = 0;
/** The BullMQ prefix of this run's queues (all its keys are removed afterwards). */
const prefix = `fault-matrix-${randomUUID().slice(0, 8)}`;

async function committed(
  column: Column,
  eventId: string,
  intentId: string,
): Promise<{ ledger: number; inbox: number; fired: number }> {
  // The inbox row of each handler's slot in the intent's record (`i:<intent>/succeeded|<handler>`) holds the event.
  const { rows } = await column.db.query(
    `SELECT (SELECT count(*) FROM ledger WHERE event_id = $1)::int AS ledger,
            (SELECT count(*) FROM payments_inbox WHERE key LIKE $2 || '/%' AND ($1 = ANY(done) OR '*' = ANY(done)))::int AS inbox,
            (SELECT count(*) FROM fault_fired WHERE key LIKE '%' || $1 || '%' OR key LIKE '%' || $3 || '%')::int AS fired`,
    [eventId, `i:${intentId}`, intentId],
  );
  return rows[0] as { ledger: number; inbox: number; fired: number };
}

/** Runs one cell to its end (redeliveries included) and says what went wrong, if anything. */
async function runCell(column: Column, row: FaultRow, restart?: () => Promise<void>): Promise<CellResult> {
  const started = Date.now();
  const { app, mode } = column;
  const id = faultEventId(row.fault, randomUUID());
  // The intent has the event's id, so it names the fault too: a terminal state's first claim key and its
  // inbox record are its occurrence (`payment_intent:<intent>:succeeded:<handler>`), where the app looks.
  const intentId = id;
  const signed = sign(
    createPaymentEvent('payment_intent.succeeded', { id, data: { payment_intent: { id: intentId } } }),
  );
  const answers: string[] = [];
  const problems: string[] = [];
  const exitsBefore = app.unexpectedExits;
  let last = 0;
  const deliver = async (): Promise<number> => {
    try {
      last = (await post(app.url, signed)).status;
    } catch {
      last = 0;
    }
    answers.push(last === 0 ? 'no answer' : String(last));
    if (mode === 'inline' && is2xx(last)) {
      const now = await committed(column, id, intentId);
      if (now.ledger !== 1 || now.inbox !== 1) {
        problems.push(`answered ${last} with ${now.ledger} ledger row(s) and ${now.inbox} inbox row(s) committed`);
      }
    }
    return last;
  };

  const killed = row.kill ? app.expectKill(row.fault) : undefined;
  const slow = row.restart ? app.waitLine(`slow ${id}`, 20_000) : undefined;
  const first = deliver();
  if (slow) {
    if (!(await slow)) problems.push('the handler never reached its slow statement');
    await restart!();
  }
  await first;
  if (killed) {
    if (!(await killed)) {
      problems.push(`no SIGKILL at ${row.fault}`);
      await app.stop();
    }
    await app.start();
  }
  if (mode === 'queued' && row.kill === undefined && !is2xx(last)) problems.push(`enqueue answered ${last}`);

  let attempts: number | undefined;
  const deadline = Date.now() + CLAIM_TTL_SECONDS * 1000 + 25_000;
  if (mode === 'inline') {
    while (!is2xx(last)) {
      if (Date.now() > deadline) {
        problems.push('no 2xx within the deadline: left leased?');
        break;
      }
      await sleep(150);
      await deliver();
    }
  } else {
    for (;;) {
      const job = await column.queue!.getJob(id);
      const state = job ? await job.getState() : 'missing';
      if (state === 'completed') {
        // One stack trace per failed attempt (a job whose worker was killed is retried without one).
        attempts = job!.stacktrace?.length ?? 0;
        break;
      }
      if (state === 'failed' || Date.now() > deadline) {
        problems.push(`job ${state}${job?.failedReason ? `: ${job.failedReason}` : ''}`);
        break;
      }
      await sleep(100);
    }
  }
  const end = await committed(column, id, intentId);
  if (end.ledger !== 1) problems.push(`${end.ledger} ledger rows after redeliveries`);
  if (end.inbox !== 1) problems.push(`${end.inbox} inbox rows after redeliveries`);
  if (row.fault !== 'none' && !row.restart && end.fired === 0) problems.push('the fault did not fire');
  // One more redelivery: answered 2xx (409 only while a lease left by a fault expires), adds nothing.
  const leaseDeadline = Date.now() + CLAIM_TTL_SECONDS * 1000 + 5_000;
  let again = await deliver();
  while (again === 409 && Date.now() < leaseDeadline) {
    await sleep(150);
    again = await deliver();
  }
  if (!is2xx(again)) problems.push(`a redelivery after the end answered ${again}`);
  const after = await committed(column, id, intentId);
  if (after.ledger !== 1) problems.push(`${after.ledger} ledger rows after one more redelivery`);
  if (app.unexpectedExits !== exitsBefore || !app.alive) problems.push(`the app crashed: ${app.lastStderr()}`);
  if (app.unhandled()) problems.push(`unhandled rejection: ${app.unhandled()}`);
  return {
    runner: column.runner,
    mode,
    fault: row.fault,
    answers,
    attempts,
    ledger: after.ledger,
    inbox: after.inbox,
    ms: Date.now() - started,
    problems,
  };
}

/** Keeps a cell's result; a cell that threw is a failed cell naming the error. */
function recordCell(column: Column, row: FaultRow, result: Promise<CellResult>): Promise<void> {
  return result
    .catch((error: unknown): CellResult => ({
      runner: column.runner,
      mode: column.mode,
      fault: row.fault,
      answers: [],
      ledger: -1,
      inbox: -1,
      ms: 0,
      problems: [`threw: ${error instanceof Error ? error.message : String(error)}`],
    }))
    .then((cell) => {
      if (process.env['FAULT_MATRIX_VERBOSE']) process.stderr.write(`${JSON.stringify(cell)}\n`);
      results.set(cellKey(column.runner, column.mode, row.fault), cell);
    });
}

async function runColumn(column: Column): Promise<void> {
  // Cells that keep the process up run side by side; SIGKILL cells one after the other.
  await Promise.all(
    FAULT_ROWS.filter((r) => !r.kill && !r.restart).map((row) => recordCell(column, row, runCell(column, row))),
  );
  for (const row of FAULT_ROWS.filter((r) => r.kill)) await recordCell(column, row, runCell(column, row));
}

describe('fault matrix: exactly-once at every failure point (private PostgreSQL 15, BullMQ on Redis)', () => {
  beforeAll(async () => {
    const started = Date.now();
    build = buildInboxApps();
    postgres = await startPrivatePostgres();
    const admin = new pg.Client({ connectionString: postgres.url() });
    await admin.connect();
    for (const runner of RUNNERS) {
      for (const mode of MODES) {
        const database = `fm_${runner}_${mode}`;
        await admin.query(`CREATE DATABASE ${database}`);
        const db = new pg.Pool({ connectionString: postgres.url(database), max: 4 });
        db.on('error', () => undefined);
        await db.query(SCHEMA);
        // The inbox table from the migration, as docs/exactly-once.md says (the suite counts its rows from the start).
        await db.query(paymentsInboxSchema());
        const queueName = `fault-matrix-${runner}`;
        const env: Record<string, string> = {
          PG_URL: postgres.url(database),
          ORM: runner,
          MODE: mode,
          SECRET: CURRENT_SECRET,
          CLAIM_TTL_SECONDS: String(CLAIM_TTL_SECONDS),
          REDIS_URL,
          QUEUE_NAME: queueName,
          QUEUE_PREFIX: prefix,
        };
        const app = new FaultApp(join(dirname(build.main), 'fault-merchant.main.js'), env);
        const queue = mode === 'queued' ? new Queue(queueName, { connection: { url: REDIS_URL }, prefix }) : undefined;
        columns.push({ runner, mode, app, db, ...(queue ? { queue } : {}) });
      }
    }
    await admin.end();
    await Promise.all(columns.map((column) => column.app.start()));
    await Promise.all(columns.map(runColumn));
    // PostgreSQL restarted mid-run: every column has a handler inside pg_sleep when the server restarts.
    const restartRow = FAULT_ROWS.find((r) => r.restart)!;
    // One restart for all columns, once each has a handler inside pg_sleep (or failed before it, or 30 s passed).
    const arrivals = columns.map(() => {
      let arrive!: () => void;
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      return { arrive, arrived };
    });
    const restarted = Promise.race([Promise.all(arrivals.map((a) => a.arrived)), sleep(30_000)]).then(() =>
      postgres!.restart(),
    );
    await Promise.all(
      columns.map((column, i) =>
        recordCell(
          column,
          restartRow,
          runCell(column, restartRow, () => {
            arrivals[i]!.arrive();
            return restarted;
          }).finally(() => arrivals[i]!.arrive()),
        ),
      ),
    );
    durationMs = Date.now() - started;
    const table = renderMatrix(FAULT_ROWS, RUNNERS, MODES, results, { durationMs, claimTtlSeconds: CLAIM_TTL_SECONDS });
    const out = process.env['FAULT_MATRIX_OUT'] ?? join(tmpdir(), 'payments-fault-matrix.md');
    writeFileSync(out, table);
    writeFileSync(out.replace(/\.md$/, '') + '.json', JSON.stringify([...results.values()], null, 2));
    process.stdout.write(`fault matrix: ${results.size} cells in ${durationMs} ms, table in ${out}\n`);
  }, 400_000);

  afterAll(async () => {
    await Promise.all(columns.map((column) => column.app.stop()));
    for (const column of columns) {
      await column.queue?.obliterate({ force: true }).catch(() => undefined);
      await column.queue?.close();
      await column.db.end().catch(() => undefined);
    }
    // Whatever a queue left behind (BullMQ rewrites its meta key on close).
    const redis = new Redis(REDIS_URL);
    for (const key of await redis.keys(`${prefix}:*`)) await redis.del(key);
    await redis.quit();
    postgres?.remove();
    build?.remove();
  }, 60_000);

  describe.each(RUNNERS.flatMap((runner) => MODES.map((mode) => [runner, mode] as const)))(
    '%s runner, %s',
    (runner, mode) => {
      it.each(FAULT_ROWS.map((row) => [row.fault, row.point, row.how] as const))('%s (%s: %s)', (fault) => {
        const result = results.get(cellKey(runner, mode, fault));
        expect(result?.problems).toEqual([]);
        expect(result?.ledger).toBe(1);
        expect(result?.inbox).toBe(1);
      });
    },
  );
});
