/**
 * Resource types of the payment service. Each lists the fields the reference documents and stays
 * open (`[key: string]: unknown`) for the fields it does not show.
 */

import type { PAYMENT_INTENT_STATES, SETUP_INTENT_STATES } from './payments-intent.states.js';

/** The nine payment-intent states the service signals by event (`PAYMENT_INTENT_STATES`). */
export type PaymentIntentState = (typeof PAYMENT_INTENT_STATES)[number];

/** The four setup-intent states the service signals by event (`SETUP_INTENT_STATES`). */
export type SetupIntentState = (typeof SETUP_INTENT_STATES)[number];

/** Capture methods: the reference names only `automatic_async`; others exist but are not listed. */
export type CaptureMethod = 'automatic_async' | (string & {});

/** A payment intent. Read `state` for the outcome of processing. */
export interface PaymentIntent {
  /** UUID. */
  id: string;
  /** Current state; states the reference does not list are possible, hence the open string. */
  state: PaymentIntentState | (string & {});
  /** Present in event payloads; the unit is not stated by the reference. */
  amount?: number;
  capture_method?: CaptureMethod;
  [field: string]: unknown;
}

/** A setup intent (saves, "vaults", a payment method). */
export interface SetupIntent {
  /** UUID. */
  id: string;
  state: SetupIntentState | (string & {});
  [field: string]: unknown;
}

/**
 * What `create` returns for an intent: the intent plus an embed token. The reference does not show
 * the token's field name, so it is left open; hand the browser only the token, never the API key.
 */
export type CreatedPaymentIntent = PaymentIntent;
export type CreatedSetupIntent = SetupIntent;

/** A webhook endpoint; `secret` authenticates its deliveries. Store it like a password. */
export interface WebhookEndpoint {
  /** UUID, carried in deliveries as `webhook_id`. */
  id: string;
  secret: string;
  url?: string;
  [field: string]: unknown;
}

/** Request payloads are not shown by the reference: open records. */
export type CreatePaymentIntentParams = Record<string, unknown>;
export type CreateSetupIntentParams = Record<string, unknown>;
export type CreateWebhookEndpointParams = Record<string, unknown>;
