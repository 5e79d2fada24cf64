import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RETRYABLE_GET_STATUSES, NOT_SENT_CODES } from '../../../lib/client/payments-retry.policy.js';
import { DEFAULT_RETENTION_SECONDS } from '../../../lib/core/payments.defaults.js';
import { DEFAULT_TERMINAL_STATES } from '../../../lib/webhooks/contracts/payments-reconcile.options.js';
import { reconciledEvent } from '../../../lib/webhooks/reconcile/reconcile-sweep.js';
import { standardWebhooksEd25519 } from '../../../lib/webhooks/index.js';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { WebhookReceiver } from '../../e2e/testing/simulator/webhook-receiver.fixture.js';

/*
 * docs/open-points.md says what the code does: each claim below is read from the page and compared
 * with the value the code produces (readme-open-choices.spec.ts checks the page against the reference).
 */
const PAGE = readFileSync(join(process.cwd(), 'docs', 'open-points.md'), 'utf8');
const line = (start: string): string => {
  const found = PAGE.split('\n').find((text) => text.startsWith(`- ${start}`));
  if (found === undefined) throw new Error(`no line '- ${start}' in docs/open-points.md`);
  return found;
};
const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('docs/open-points.md says what the code does', () => {
  it("a reconciled event's id: a stable name-based UUID (version 5), not ''; its webhook_id ''", () => {
    const intent = { id: '0f6e5b2a-4a8e-4c55-9a47-3f1c2b7d9e10', state: 'succeeded' };
    const event = reconciledEvent('payment_intent', 'succeeded', intent);
    expect(event.id).toMatch(UUID_V5);
    expect(reconciledEvent('payment_intent', 'succeeded', { ...intent }).id).toBe(event.id);
    expect(event.webhook_id).toBe('');
    const terminal = line('Which intent states are terminal');
    expect(terminal).toContain('its `id` is a name-based UUID (version 5) of `kind:intentId:state`');
    expect(terminal).toContain("its `webhook_id` is `''`");
    expect(PAGE).not.toMatch(/`id` and `webhook_id` are `''`/);
  });

  it('the default terminal states', () => {
    expect([...DEFAULT_TERMINAL_STATES.payment_intent]).toEqual(['succeeded', 'cancelled']);
    expect([...DEFAULT_TERMINAL_STATES.setup_intent]).toEqual(['succeeded', 'cancelled']);
    expect(line('Which intent states are terminal')).toContain('default `succeeded` and `cancelled` for both kinds');
  });

  it('which answers are retried, and the retention of completed events', () => {
    expect([...RETRYABLE_GET_STATUSES]).toEqual([502, 503, 504]);
    expect(line('Which 5xx are transient')).toContain('a GET is retried on 502, 503 and 504, not on 500');
    expect([...NOT_SENT_CODES]).toEqual(['ECONNREFUSED']);
    expect(line('Whether a POST is idempotent')).toContain('(429, `ECONNREFUSED`)');
    expect(DEFAULT_RETENTION_SECONDS).toBe(3 * 24 * 3600);
    expect(line('Retry schedule of the service')).toContain('`retentionSeconds` (default 3 days)');
  });

  it("the simulator's Ed25519 endpoint keys are named", () => {
    const secret = standardWebhooksEd25519({ publicKeys: `whpk_${Buffer.alloc(32, 1).toString('base64')}` })
      .newSecret!();
    expect(secret).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
    expect(line('Endpoint secrets')).toContain('`whsk_` + the base64 of a 32-byte seed');
  });

  describe("the simulator's WebhookRequest and WebhookAttempt fields", () => {
    const sim = new PaymentsSimulator({ apiKeys: ['sk_test_open_points'], retrySchedule: [] });
    const receiver = new WebhookReceiver();
    beforeAll(async () => {
      await sim.start();
      sim.registerWebhookEndpoint({ url: await receiver.start() });
    });
    afterAll(async () => {
      await sim.stop();
      await receiver.stop();
    });

    it('are the ones the page lists, in its order', async () => {
      sim.emit('payment_intent.succeeded');
      await sim.waitForIdle();
      const { attempts, ...request } = sim.webhookRequests()[0]!;
      const fields = line('WebhookRequest fields');
      const listed = (label: string): string[] =>
        new RegExp(`${label} fields: \`([^\`]*)\``)
          .exec(fields)![1]!
          .replace(/ \([^)]*\)/g, '') // the notes in brackets: `status (held|queued|...)`
          .split(', ');
      expect(listed('WebhookRequest')).toEqual(Object.keys(request));
      expect(listed('WebhookAttempt')).toEqual(Object.keys(attempts[0]!));
    });
  });
});
