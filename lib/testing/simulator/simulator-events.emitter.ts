import { randomUUID } from 'node:crypto';
import type { WebhookSignatureScheme } from '../../webhooks/contracts/webhook-signature-scheme.interface.js';
import { signWebhook } from '../sign-webhook.js';
import type { IntentRecord, SimulatedEvent, SimulatorState } from './simulator-state.js';
import type { DeliveryBatchItem, WebhookDeliveryEngine } from './webhook-delivery.engine.js';

/**
 * The emission rules: which events a confirm outcome raises, and how each event becomes one signed
 * delivery per subscribed endpoint of the intent's account.
 */
export class SimulatorEventsEmitter {
  constructor(
    private readonly state: SimulatorState,
    private readonly engine: WebhookDeliveryEngine,
    private readonly scheme: WebhookSignatureScheme,
  ) {}

  /** The event types a confirm with `outcome` raises: the intent's own, plus `charge.*` for `automatic_async`. */
  static typesForOutcome(intent: Pick<IntentRecord, 'kind' | 'capture_method'>, outcome: string): string[] {
    const types: string[] = [`${intent.kind}.${outcome}`];
    if (intent.kind === 'payment_intent' && intent.capture_method === 'automatic_async') {
      if (outcome === 'succeeded') types.push('charge.succeeded');
      if (outcome === 'requires_capture') types.push('charge.requires_capture');
    }
    return types;
  }

  /** Records the events and hands one batch (every event × subscribed endpoint of the intent's account) to the engine. */
  emit(intent: IntentRecord, types: string[]): SimulatedEvent[] {
    const snapshot = this.state.snapshot(intent);
    const batch: DeliveryBatchItem[] = [];
    const emitted: SimulatedEvent[] = [];
    for (const type of types) {
      const eventId = randomUUID();
      const base = { id: eventId, event: type, data: { [intent.kind]: snapshot }, metadata: null };
      emitted.push(base as SimulatedEvent);
      batch.push({
        eventId,
        event: type,
        targets: this.state.subscribers(intent.account, type),
        bodyFor: (target) =>
          JSON.stringify({ id: eventId, webhook_id: target.id, event: type, data: base.data, metadata: null }),
      });
    }
    this.state.events.push(...emitted);
    this.engine.enqueue(batch);
    return emitted.map((e) => structuredClone(e));
  }

  /** Headers of one attempt, signed with the endpoint's secret in the simulator's scheme. */
  sign(rawBody: string, secret: string, msgId: string, timestamp: number): Record<string, string> {
    return signWebhook(rawBody, this.scheme.withSecrets(secret), { msgId, timestamp }).headers;
  }
}
