import { describe, expect, it } from '@jest/globals';
import { PaymentsConfigurationError } from '../../../../lib/index.js';
import { resolveReconcileOptions } from '../../../../lib/webhooks/reconcile/payments-reconcile.validator.js';

/* `webhooks.reconcile.maxConcurrentRetrieves` (issue 31, item 4), checked at boot. */
describe('webhooks.reconcile.maxConcurrentRetrieves', () => {
  it('defaults to one second of retrieves: ceil(maxRetrievesPerSecond), between 1 and 32', () => {
    expect(resolveReconcileOptions({})!.maxConcurrentRetrieves).toBe(5);
    expect(resolveReconcileOptions({ maxRetrievesPerSecond: 0.5 })!.maxConcurrentRetrieves).toBe(1);
    expect(resolveReconcileOptions({ maxRetrievesPerSecond: 7.5 })!.maxConcurrentRetrieves).toBe(8);
    expect(resolveReconcileOptions({ maxRetrievesPerSecond: 500 })!.maxConcurrentRetrieves).toBe(32);
    expect(resolveReconcileOptions({ maxConcurrentRetrieves: 1 })!.maxConcurrentRetrieves).toBe(1);
  });

  it.each([0, 2.5, -1, Number.NaN, '4'])('refuses %p with an error naming the option', (value) => {
    expect(() => resolveReconcileOptions({ maxConcurrentRetrieves: value })).toThrow(PaymentsConfigurationError);
    expect(() => resolveReconcileOptions({ maxConcurrentRetrieves: value })).toThrow(
      /webhooks\.reconcile\.maxConcurrentRetrieves/,
    );
  });
});
