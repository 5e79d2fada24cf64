import { MemoryIdempotencyStore } from '../../../../lib/index.js';
import { describeLeaseRenewal } from '../../../fixtures/webhooks/lease-renewal.scenario.js';

describeLeaseRenewal('MemoryIdempotencyStore', {
  store: () => new MemoryIdempotencyStore(),
  // The memory store has no per-key delete: close() forgets every claim, this one included.
  forget: (store) => store.close(),
});
