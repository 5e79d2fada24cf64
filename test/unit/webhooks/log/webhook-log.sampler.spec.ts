import { beforeEach, describe, expect, it } from '@jest/globals';
import { WebhookLogSampler } from '../../../../lib/webhooks/log/webhook-log.sampler.js';

describe('WebhookLogSampler', () => {
  let now: number;
  let lines: string[];
  let scheduled: Array<{ run: () => void; delayMs: number }>;
  let sampler: WebhookLogSampler;
  beforeEach(() => {
    now = 1_000_000;
    lines = [];
    scheduled = [];
    sampler = new WebhookLogSampler({
      write: (line) => lines.push(line),
      now: () => now,
      firstPerWindow: 3,
      windowMs: 60_000,
      schedule: (run, delayMs) => scheduled.push({ run, delayMs }),
    });
  });

  it('writes the first lines of a reason as they come', () => {
    for (let i = 0; i < 3; i += 1) sampler.log('invalid_signature', `line ${i}`);
    expect(lines).toEqual(['line 0', 'line 1', 'line 2']);
    expect(scheduled).toHaveLength(0);
  });

  it('bounds a flood: 10000 lines in one window cost the first 3 and one summary with the count', () => {
    for (let i = 0; i < 10_000; i += 1) sampler.log('invalid_signature', `line ${i}`);
    expect(lines).toHaveLength(3);
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0]!.delayMs).toBe(60_000);
    scheduled[0]!.run();
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatch(/^9997 more line\(s\) of reason invalid_signature not written in this 60 s window/);
  });

  it('counts each reason apart', () => {
    for (let i = 0; i < 5; i += 1) sampler.log('invalid_signature', `sig ${i}`);
    for (let i = 0; i < 5; i += 1) sampler.log('busy', `busy ${i}`);
    expect(lines).toEqual(['sig 0', 'sig 1', 'sig 2', 'busy 0', 'busy 1', 'busy 2']);
    sampler.flush();
    expect(lines.slice(6)).toEqual([
      expect.stringMatching(/^2 more .* invalid_signature/),
      expect.stringMatching(/^2 more .* busy/),
    ]);
  });

  it('starts a new window after windowMs: the summary of the last one, then the first lines again', () => {
    for (let i = 0; i < 4; i += 1) sampler.log('invalid_signature', `a${i}`);
    now += 60_000;
    sampler.log('invalid_signature', 'b0');
    expect(lines).toEqual(['a0', 'a1', 'a2', expect.stringMatching(/^1 more /), 'b0']);
    scheduled[0]!.run(); // the old window's timer: already summarised, writes nothing
    expect(lines).toHaveLength(5);
  });

  it('writes no summary for a window where nothing was suppressed', () => {
    sampler.log('busy', 'one');
    now += 120_000;
    sampler.log('busy', 'two');
    sampler.flush();
    expect(lines).toEqual(['one', 'two']);
  });
});
