import { format } from 'node:util';
import { jest } from '@jest/globals';
import { renderings } from '../../e2e/client/support/leak-check.js';

/** One secret found where it must never be: which secret (by label, never its value) and where. */
export interface LeakHit {
  secret: string;
  source: string;
}

interface Needle {
  label: string;
  text: string;
}

const MIN_NEEDLE_LENGTH = 8;
/** Above this many needles, texts are scanned through an index of needle prefixes instead of one search per needle. */
const INDEXED_SCAN_ABOVE = 256;

/**
 * The leak audit of the chaos suite: knows every API key and webhook secret the suite hands out, in
 * every form they could be printed in (a `whsec_` secret, its base64 body, the key bytes re-encoded as
 * base64, base64url, hex, and as text), and scans every text it is given for them: log lines, console
 * and stdio output, rendered errors, HTTP answers. It keeps counts and hits, never the texts, so it
 * can watch a long run without growing.
 */
export class LeakAudit {
  readonly hits: LeakHit[] = [];
  linesScanned = 0;
  charsScanned = 0;
  errorsRendered = 0;
  readonly #needles: Needle[] = [];
  /** Needles by their first MIN_NEEDLE_LENGTH characters. */
  readonly #byPrefix = new Map<string, Needle[]>();

  /** An API key: found verbatim, it is a leak. */
  addApiKey(label: string, key: string): this {
    return this.#add(label, [key]);
  }

  /**
   * A webhook secret: `whsec_` + base64 (Standard Webhooks) or a plain string (HMAC). Every encoding of
   * its key bytes is a needle too, so that a logged Buffer or a re-encoded key is caught.
   */
  addWebhookSecret(label: string, secret: string): this {
    const forms = [secret];
    if (secret.startsWith('whsec_')) {
      const body = secret.slice('whsec_'.length);
      const bytes = Buffer.from(body, 'base64');
      forms.push(body, bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'));
      const asText = bytes.toString('utf8');
      if (/^[\x20-\x7e]+$/.test(asText)) forms.push(asText);
    } else {
      const bytes = Buffer.from(secret, 'utf8');
      forms.push(bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'));
    }
    return this.#add(label, forms);
  }

  /** Where the counters stand, to attribute what follows to one part of the run. */
  mark(): { hits: number; lines: number; errors: number } {
    return { hits: this.hits.length, lines: this.linesScanned, errors: this.errorsRendered };
  }

  /** Leaks found, texts scanned and errors rendered since `mark`, as report figures. */
  since(mark: { hits: number; lines: number; errors: number }): {
    leaks: number;
    logLines: number;
    errorsRendered: number;
  } {
    return {
      leaks: this.hits.length - mark.hits,
      logLines: this.linesScanned - mark.lines,
      errorsRendered: this.errorsRendered - mark.errors,
    };
  }

  /** How many distinct needles are searched for. */
  get needleCount(): number {
    return this.#needles.length;
  }

  /** Scans one text (a log line, an answer, console output). */
  scan(text: string, source: string): void {
    this.linesScanned += 1;
    this.charsScanned += text.length;
    if (this.#needles.length <= INDEXED_SCAN_ABOVE) {
      for (const needle of this.#needles) {
        if (text.includes(needle.text)) this.hits.push({ secret: needle.label, source });
      }
      return;
    }
    // Many needles (every endpoint created in the storm adds some): one pass over the text, whatever their number.
    for (let i = 0; i + MIN_NEEDLE_LENGTH <= text.length; i++) {
      const candidates = this.#byPrefix.get(text.slice(i, i + MIN_NEEDLE_LENGTH));
      if (candidates === undefined) continue;
      for (const needle of candidates)
        if (text.startsWith(needle.text, i)) this.hits.push({ secret: needle.label, source });
    }
  }

  /** Scans every common rendering of an error: String, message, stack, JSON, util.inspect (depth 12, hidden fields). */
  scanError(error: unknown, source: string): void {
    this.errorsRendered += 1;
    for (const text of renderings(error)) this.scan(text, source);
  }

  /**
   * Spies on console.* and process.stdout/stderr.write for the rest of the run: output still goes
   * through, and is scanned on the way. Returns the restore function.
   */
  watchOutput(): () => void {
    const spies = (['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((method) => {
      const original = console[method].bind(console);
      return jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        this.scan(format(...args), `console.${method}`);
        original(...args);
      });
    });
    const streams = [process.stdout, process.stderr].map((stream, index) => {
      const original = stream.write;
      const source = index === 0 ? 'stdout' : 'stderr';
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        this.scan(
          typeof chunk === 'string'
            ? chunk
            : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array
              ? Buffer.from(chunk).toString('utf8')
              : String(chunk),
          source,
        );
        return (original as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
      }) as typeof stream.write;
      return () => {
        stream.write = original;
      };
    });
    return () => {
      for (const spy of spies) spy.mockRestore();
      for (const restore of streams) restore();
    };
  }

  #add(label: string, forms: string[]): this {
    for (const text of new Set(forms)) {
      if (text.length < MIN_NEEDLE_LENGTH) continue;
      const prefix = text.slice(0, MIN_NEEDLE_LENGTH);
      const sharing = this.#byPrefix.get(prefix) ?? [];
      if (sharing.some((needle) => needle.text === text)) continue;
      const needle = { label, text };
      this.#needles.push(needle);
      this.#byPrefix.set(prefix, [...sharing, needle]);
    }
    return this;
  }
}

/** The audit every part of the chaos suite reports to (one spec file, so one instance). */
export const leakAudit = new LeakAudit();
