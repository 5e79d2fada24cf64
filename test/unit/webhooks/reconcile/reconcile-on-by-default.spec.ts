import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Logger, type DynamicModule } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { PaymentsModule } from '../../../../lib/index.js';
import { resolveReconcileOptions } from '../../../../lib/webhooks/reconcile/payments-reconcile.validator.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

/*
 * Issue 42, item 3: reconciliation is on wherever the app has both the client and the receiver; one
 * option in one place (`webhooks.reconcile: false`) turns it off; the boot says so, with its cadence.
 */
let moduleRef: TestingModule | undefined;
afterEach(async () => {
  await moduleRef?.close();
  moduleRef = undefined;
});

async function bootLines(module: DynamicModule): Promise<string[]> {
  const logger = new CapturingLogger();
  Logger.overrideLogger(logger);
  moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
  moduleRef.useLogger(logger);
  await moduleRef.init();
  return logger.messages('log').filter((line) => line.startsWith('Reconciliation'));
}

describe('reconciliation on by default', () => {
  it('left out, webhooks.reconcile resolves to the defaults, marked byDefault; false is the off switch', () => {
    expect(resolveReconcileOptions(undefined)).toMatchObject({ byDefault: true, everyMs: 30_000, afterMs: 60_000 });
    expect(resolveReconcileOptions(true)).not.toHaveProperty('byDefault');
    expect(resolveReconcileOptions(false)).toBeUndefined();
  });

  it('the boot line says it is on by default, with its cadence, and names the switch that turns it off', async () => {
    const lines = await bootLines(PaymentsModule.forRoot(fixtureOptions()));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Reconciliation on \(the default\): first check 60 s after an intent is created, a sweep every 30 s/,
    );
    expect(lines[0]).toMatch(/turn it off with webhooks: \{ reconcile: false \}$/);
  });

  it('webhooks: { reconcile: false } turns it off: no reconciler, no line', async () => {
    expect(await bootLines(PaymentsModule.forRoot(fixtureOptions({ reconcile: false })))).toEqual([]);
  });
});
