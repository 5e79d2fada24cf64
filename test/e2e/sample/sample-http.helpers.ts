import type { CheckoutSession } from '../../../sample/checkout/checkout-session.factory.js';
import type { OrderView } from '../../../sample/orders/orders.controller.js';
import type { PaymentMethodSetupView } from '../../../sample/payment-methods/payment-methods.controller.js';
import { requestJson, type SampleStack } from './sample-stack.fixture.js';

export type { CheckoutSession, OrderView, PaymentMethodSetupView };

/** `POST /orders` of the sample. */
export async function createOrder(
  stack: SampleStack,
  body: Record<string, unknown> = { amount: 1999 },
): Promise<{ order: OrderView; checkout: CheckoutSession }> {
  const answer = await requestJson<{ order: OrderView; checkout: CheckoutSession }>(
    'POST',
    `${stack.url}/orders`,
    body,
  );
  if (answer.status !== 201) throw new Error(`POST /orders answered ${answer.status}: ${answer.text}`);
  return answer.body;
}

/** `GET /orders/:id` of the sample. */
export async function getOrder(stack: SampleStack, id: string): Promise<OrderView> {
  const answer = await requestJson<OrderView>('GET', `${stack.url}/orders/${id}`);
  if (answer.status !== 200) throw new Error(`GET /orders/${id} answered ${answer.status}`);
  return answer.body;
}

/**
 * What the iframe does when the shopper presses a button: the simulator's confirm call, authorised by
 * the embed token (`Authorization: Embed <token>`). `POST {form origin}/embed/confirm` is the
 * simulator's choice of path.
 */
export async function confirmInForm(
  checkout: CheckoutSession,
  outcome: string,
): Promise<{ status: number; body: { state?: string } }> {
  const answer = await requestJson<{ state?: string }>(
    'POST',
    new URL('confirm', checkout.formUrl).toString(),
    { outcome },
    { authorization: `Embed ${checkout.embedToken}` },
  );
  return { status: answer.status, body: answer.body };
}
