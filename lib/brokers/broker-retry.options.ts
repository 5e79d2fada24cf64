/** How a delivery that should be tried again (busy, failed, store down) is retried by a broker consumer, then parked. */
export interface PaymentsBrokerRetryOptions {
  /** How long a message waits before it is delivered again, in ms. Default 30000. */
  delayMs?: number;
  /** Deliveries of one message, the first included, before it is parked in the dead-letter queue or stream. Default 5. */
  maxAttempts?: number;
}
