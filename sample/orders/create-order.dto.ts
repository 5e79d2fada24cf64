import { BadRequestException } from '@nestjs/common';
import type { CreateOrderInput } from './orders.service.js';

/** Largest amount the sample accepts, in the currency's smallest unit. */
export const MAX_ORDER_AMOUNT = 100_000_000;

const CURRENCY = /^[A-Z]{3}$/;

/**
 * Checks the body of `POST /orders`: `{ amount: positive integer, currency?: 'EUR', capture_method?:
 * 'automatic_async' }`. Hand-written to keep the sample free of a validation library.
 */
export function parseCreateOrderBody(body: unknown, defaultCurrency: string): CreateOrderInput {
  const value = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const amount = value['amount'];
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0 || amount > MAX_ORDER_AMOUNT) {
    throw new BadRequestException(
      `amount must be an integer between 1 and ${MAX_ORDER_AMOUNT} (smallest currency unit)`,
    );
  }
  const currency = value['currency'] ?? defaultCurrency;
  if (typeof currency !== 'string' || !CURRENCY.test(currency)) {
    throw new BadRequestException('currency must be a three-letter upper-case code, e.g. EUR');
  }
  const captureMethod = value['capture_method'];
  if (captureMethod !== undefined && captureMethod !== 'automatic_async') {
    throw new BadRequestException(
      "capture_method, when given, must be 'automatic_async' (the only value the reference names)",
    );
  }
  return { amount, currency, ...(captureMethod === undefined ? {} : { captureMethod }) };
}
