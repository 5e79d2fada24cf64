import type { PaymentsClock } from '../../core/payments.clock.js';

export { resolveClock } from '../../core/payments.clock.js';

/**
 * The clock a verifier reads to check a timestamp: the package's one clock shape (`PaymentsClock`),
 * a function returning milliseconds since the epoch or any object with such a `now()`.
 */
export type VerifierClock = PaymentsClock;
