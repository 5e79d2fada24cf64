import type { Readable } from 'node:stream';
import { PaymentsError } from '../errors/payments.errors.js';
import { ANSWER_ENDED_EARLY_MESSAGE } from '../errors/payments.messages.js';

const CODE_RE = /^E[A-Z0-9_]{2,40}$/;

/**
 * Extracts a system error code (`ECONNREFUSED`, `ECONNRESET`, ...) from whatever axios threw. Only
 * the code survives: the error itself carries the request config and headers, hence the API key.
 */
export function connectionCode(error: unknown): string {
  const candidates: unknown[] = [];
  if (typeof error === 'object' && error !== null) {
    const e = error as { code?: unknown; cause?: { code?: unknown }; errors?: Array<{ code?: unknown }> };
    candidates.push(e.cause?.code, e.errors?.[0]?.code, e.code);
  }
  for (const code of candidates) {
    if (typeof code === 'string' && CODE_RE.test(code)) return code;
  }
  return 'ECONNECTION';
}

/** Parses a body: JSON when the content type says JSON (text if it does not parse), else text; empty -> undefined. */
export function parseBody(text: string, contentType: unknown): unknown {
  if (text === '') return undefined;
  const type = String(contentType ?? '').toLowerCase();
  if (/[/+]json\b/.test(type)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * Reads `stream` to its end if it holds at most `maxBytes` (decompressed) bytes; otherwise stops at
 * once, destroys the stream (and its socket) and resolves `undefined`. An announced Content-Length
 * above the cap is refused before reading anything.
 */
export function readAtMost(stream: Readable, maxBytes: number, contentLength: unknown): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(contentLength);
    if (Number.isFinite(declared) && declared > maxBytes) {
      stream.destroy();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        ended = true;
        chunks.length = 0;
        stream.destroy();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks, size));
    });
    stream.on('error', reject);
    stream.on('close', () => {
      if (!ended) reject(Object.assign(new PaymentsError(ANSWER_ENDED_EARLY_MESSAGE), { code: 'ECONNRESET' }));
    });
  });
}
