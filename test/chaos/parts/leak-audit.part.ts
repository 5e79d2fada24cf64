import { beforeAll, describe, expect, it } from '@jest/globals';
import { AuditLogger } from '../support/audit.logger.js';
import { leakAudit, PARTS, report } from '../support/chaos.context.js';
import { LeakAudit } from '../support/leak-audit.js';

const CANARY_KEY = 'sk_test_CANARY_0a1b2c3d4e5f6789';
const CANARY_SECRET = `whsec_${Buffer.from('canary-webhook-secret-32-bytes!!').toString('base64')}`;

/**
 * Item 5: the audit itself. First, proof on a separate instance that it finds what it looks for (so
 * that zero hits means something); then the verdict on everything the run logged, printed, answered
 * and threw.
 */
export function describeLeakAudit(): void {
  describe('leak audit of every log line, output, answer and rendered error of the run', () => {
    let mark = leakAudit.mark();
    beforeAll(() => {
      mark = leakAudit.mark();
    });

    it('finds a webhook secret in every form of its key bytes: whsec_, base64, base64url, hex, text', () => {
      const audit = new LeakAudit().addWebhookSecret('canary secret', CANARY_SECRET);
      const bytes = Buffer.from(CANARY_SECRET.slice('whsec_'.length), 'base64');
      const forms = [
        CANARY_SECRET,
        CANARY_SECRET.slice(6),
        bytes.toString('base64url'),
        bytes.toString('hex'),
        bytes.toString('utf8'),
      ];
      const found = forms.map((form) => {
        const before = audit.hits.length;
        audit.scan(`a log line with ${form} inside`, 'canary');
        return audit.hits.length > before;
      });
      expect(found).toEqual([true, true, true, true, true]);
    });

    it('finds a secret among hundreds of others (the indexed scan used once many endpoints exist)', () => {
      const audit = new LeakAudit();
      for (let i = 0; i < 300; i++)
        audit.addApiKey(`filler ${i}`, `sk_test_FILLER_${String(i).padStart(6, '0')}_${'x'.repeat(8)}`);
      audit.addWebhookSecret('canary secret', CANARY_SECRET);
      audit.scan(`prefix text ${Buffer.from(CANARY_SECRET.slice(6), 'base64').toString('hex')} suffix`, 'canary');
      audit.scan('a line without any secret, only sk_test_FILLER_ and whsec_ fragments', 'canary');
      expect(audit.needleCount).toBeGreaterThan(256);
      expect(audit.hits.map((hit) => hit.secret)).toEqual(['canary secret']);
    });

    it('finds an API key hidden in a non-enumerable field of an error (util.inspect with showHidden)', () => {
      const audit = new LeakAudit().addApiKey('canary key', CANARY_KEY);
      const error = new Error('request failed');
      Object.defineProperty(error, 'config', { value: { headers: { 'X-Api-Key': CANARY_KEY } }, enumerable: false });
      audit.scanError(error, 'canary');
      expect(audit.hits.length).toBeGreaterThan(0);
      expect(JSON.stringify(error)).not.toContain(CANARY_KEY);
    });

    it('finds a secret in a line sent through the Nest logger, including its stack argument', () => {
      const audit = new LeakAudit().addWebhookSecret('canary secret', CANARY_SECRET);
      new AuditLogger(audit).error(
        'delivery failed',
        `Error: bad\n    at verify (${CANARY_SECRET})`,
        'PaymentsWebhooks',
      );
      expect(audit.hits.length).toBeGreaterThan(0);
      expect(new Set(audit.hits.map((hit) => hit.source))).toEqual(new Set(['nest log (error)']));
    });

    it('finds no API key and no webhook secret anywhere in the run', () => {
      const partsLeaks = report.sum('leaks');
      const own = leakAudit.since(mark);
      report.record(PARTS.audit, {
        casesRun: 5,
        // Leaks of every part are in their own columns; this one adds what no part window caught.
        leaks: leakAudit.hits.length - partsLeaks,
        needles: leakAudit.needleCount,
        logLines: own.logLines,
        errorsRendered: own.errorsRendered,
      });
      expect(leakAudit.hits.map((hit) => `${hit.secret} in ${hit.source}`)).toEqual([]);
      expect(leakAudit.needleCount).toBeGreaterThan(10);
      expect(leakAudit.linesScanned).toBeGreaterThan(0);
    });
  });
}
