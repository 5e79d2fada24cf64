import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * docs/webhooks.md#events-out-of-order shows the guards the tests prove (payment-event.handled.spec.ts,
 * out-of-order-guards.e2e.spec.ts, transaction-query-result.spec.ts); open-points.md points to it.
 */
const page = (name: string): string => readFileSync(join(process.cwd(), 'docs', name), 'utf8');
const WEBHOOKS = page('webhooks.md');
const SECTION = WEBHOOKS.slice(
  WEBHOOKS.indexOf('## Events out of order'),
  WEBHOOKS.indexOf('## What the receiver answers'),
);

describe('docs/webhooks.md: Events out of order', () => {
  it('has its sub-sections, current-state handling last under its own heading', () => {
    const headings = [...SECTION.matchAll(/^###? (.*)$/gm)].map((m) => m[1]);
    expect(headings).toEqual([
      'Events out of order',
      'What arrives',
      'What the library guarantees (without current-state handling)',
      'Guard a handler in one line: `ctx.handled`',
      'Compare-and-set in the transaction: `rowCount`',
      'With current-state handling',
    ]);
    expect(SECTION).toContain('`@OnPaymentEvent(type, { current: true })`');
  });

  it('shows the one-line guard and the compare-and-set the tests run', () => {
    expect(SECTION).toContain("if (ctx.handled?.some((h) => h.state === 'succeeded')) return;");
    expect(SECTION).toContain('const { rowCount } = await ctx.transaction!.query(');
    expect(SECTION.replace(/\s+/g, ' ')).toContain(
      'the library invents no state order: an `errored_capture` after `succeeded` can be real',
    );
  });

  it('is where open-points.md sends a reader about events out of order', () => {
    expect(page('open-points.md')).toContain('(webhooks.md#events-out-of-order)');
  });
});
