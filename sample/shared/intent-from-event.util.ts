import type { PaymentEventContext } from '../../lib/index.js';

/**
 * The intent an event is about, with `fields` present: the copy in the event's `data` when it has
 * them, otherwise the service's current copy: `ctx.intent` when current-state handling retrieved it
 * for this run, else `ctx.retrieveIntent()`. The reference says
 * `data` is not a frozen schema and asks for exactly this when a field is missing [W12].
 *
 * An event whose `data` names no intent at all makes `retrieveIntent()` throw: the delivery is then
 * answered 500 and retried, and, if it never succeeds, it stays visible as a failed WebhookRequest
 * for an operator, rather than being acknowledged and lost.
 */
export async function intentFromEvent<T extends { id: string }>(
  fromData: T | undefined,
  fields: readonly (keyof T & string)[],
  ctx: PaymentEventContext,
): Promise<T> {
  if (
    fromData !== undefined &&
    typeof fromData.id === 'string' &&
    fields.every((field) => fromData[field] !== undefined)
  ) {
    return fromData;
  }
  // A handler on the current state (`{ current: true }`) has the intent as just retrieved: no second GET.
  return (ctx.intent ?? (await ctx.retrieveIntent())) as unknown as T;
}
