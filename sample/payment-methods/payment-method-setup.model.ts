/**
 * Where saving a payment method stands. Like orders, only verified webhooks move it:
 * `setup_intent.succeeded` -> `saved`; `failed` / `errored` / `cancelled` -> `failed`.
 */
export type PaymentMethodSetupStatus = 'pending' | 'saved' | 'failed';

/** One attempt to save ("vault") a payment method through a setup intent. */
export interface PaymentMethodSetup {
  readonly id: string;
  readonly setupIntentId: string;
  readonly status: PaymentMethodSetupStatus;
  /** The event that decided the status, e.g. `setup_intent.errored`. */
  readonly reason?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}
