import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { CHAOS_PAYMENTS, FUZZ_RUNS, FUZZ_SEED } from './support/chaos-sizes.js';
import { auditLogger, leakAudit, report } from './support/chaos.context.js';
import { describeReceiverFuzz, fuzzRunsPerAdapter } from './parts/receiver-fuzz.part.js';
import { CHAOS_CONFIGURATIONS, describeSimulatorChaos } from './parts/simulator-chaos.part.js';
import { describeRateLimitStorm } from './parts/rate-limit-storm.part.js';
import { describeLeakAudit } from './parts/leak-audit.part.js';
import { describeHardening } from './parts/hardening.part.js';
import { describePostgresInboxChaos, inboxChaosEvents } from './parts/postgres-inbox.part.js';
import { describeReconciliationChaos, reconcileChaosOrders } from './parts/reconciliation.part.js';

/*
 * `npm run test:chaos`: hostile input, faults and load, in one spec file so that its parts run in this
 * order in one module registry and share one leak audit and one report. The last test prints the
 * table and fails on any non-zero bad figure. Sizes: FUZZ_RUNS, CHAOS_PAYMENTS (see support/chaos-sizes.ts).
 */

let restoreOutput: () => void = () => undefined;
beforeAll(() => {
  Logger.overrideLogger(auditLogger);
  restoreOutput = leakAudit.watchOutput();
});
afterAll(() => restoreOutput());

const runs = fuzzRunsPerAdapter();
describeReceiverFuzz('express', runs.express, FUZZ_SEED);
describeReceiverFuzz('fastify', runs.fastify, FUZZ_SEED + 1);
for (const configuration of CHAOS_CONFIGURATIONS) describeSimulatorChaos(configuration, CHAOS_PAYMENTS);
describeRateLimitStorm(CHAOS_PAYMENTS);
describeHardening(Math.max(25, Math.floor(CHAOS_PAYMENTS / 40)));
describePostgresInboxChaos(inboxChaosEvents(CHAOS_PAYMENTS));
describeReconciliationChaos(reconcileChaosOrders(CHAOS_PAYMENTS));
describeLeakAudit();

describe('reliability table', () => {
  it('prints the figures and every bad figure is zero', () => {
    const table = report.render(
      `nestjs-payments reliability (FUZZ_RUNS=${FUZZ_RUNS}, CHAOS_PAYMENTS=${CHAOS_PAYMENTS}, FUZZ_SEED=${FUZZ_SEED}, ${new Date().toISOString()})`,
    );
    process.stdout.write(`\n${table}\n`);
    const file = report.write({
      fuzzRuns: FUZZ_RUNS,
      chaosPayments: CHAOS_PAYMENTS,
      fuzzSeed: FUZZ_SEED,
      date: new Date().toISOString(),
    });
    process.stdout.write(`figures written to ${file}\n`);
    expect(report.badLines()).toEqual([]);
    expect(report.missingParts()).toEqual([]);
    // The table itself went through the watched stdout.
    expect(leakAudit.hits).toEqual([]);
  });
});
