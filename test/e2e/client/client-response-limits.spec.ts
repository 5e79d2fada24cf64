import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  PaymentsApiError,
  PaymentsConfigurationError,
  PaymentsResponseTooLargeError,
  type PaymentsModuleOptions,
} from '../../../lib/index.js';
import { bootClient, INTENT_ID, TEST_API_KEY } from './support/client-fixture.js';

const HUNDRED_MB = 100 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');
const CAP = 1024 * 1024;

interface HugeAnswer {
  status: number;
  /** Announce the size in Content-Length (else chunked). */
  declareLength: boolean;
  /** What the answer's body starts with, before the filler. */
  prefix?: string;
}

/**
 * A loopback server that answers every request with a 100 MB body, produced lazily (only as fast as
 * the client reads), and counts what it managed to send.
 */
class HugeBodyServer {
  sentBytes = 0;
  requests = 0;
  answer: HugeAnswer = { status: 200, declareLength: false };
  private readonly server: Server = createServer((req, res) => {
    this.requests += 1;
    req.resume();
    const { status, declareLength, prefix = '' } = this.answer;
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(declareLength ? { 'content-length': String(HUNDRED_MB) } : {}),
    });
    let left = HUNDRED_MB;
    const first = Buffer.from(prefix);
    const pump = (): void => {
      while (left > 0 && !res.destroyed) {
        const piece = left === HUNDRED_MB && first.length > 0 ? first : CHUNK.subarray(0, Math.min(CHUNK.length, left));
        left -= piece.length;
        this.sentBytes += piece.length;
        if (!res.write(piece)) {
          res.once('drain', pump);
          return;
        }
      }
      if (left === 0) res.end();
    };
    res.on('error', () => undefined);
    pump();
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('PaymentsService http.maxResponseBytes (real loopback server answering 100 MB)', () => {
  let server: HugeBodyServer;
  let baseUrl: string;
  let close: (() => Promise<void>) | undefined;

  const boot = async (http: PaymentsModuleOptions['http'] = { maxResponseBytes: CAP, maxRetries: 3 }) => {
    const client = await bootClient(baseUrl, { http });
    close = client.close;
    return client.payments;
  };

  beforeEach(async () => {
    server = new HugeBodyServer();
    baseUrl = await server.listen();
  });
  afterEach(async () => {
    await close?.();
    close = undefined;
    await server.close();
  });

  it('stops reading a 100 MB answer at the cap: the process does not buffer it and the typed error keeps nothing of it', async () => {
    const payments = await boot();
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const error = await payments.paymentIntents.retrieve(INTENT_ID).catch((caught: unknown) => caught);
    const rssGrowth = process.memoryUsage().rss - rssBefore;

    expect(error).toBeInstanceOf(PaymentsResponseTooLargeError);
    expect(error).toBeInstanceOf(PaymentsApiError);
    const tooLarge = error as PaymentsResponseTooLargeError;
    expect(tooLarge).toMatchObject({ status: 200, method: 'GET', maxResponseBytes: CAP, body: undefined, attempts: 1 });
    expect(tooLarge.message).toMatch(/larger than http\.maxResponseBytes \(1048576 bytes\)/);
    // Not retried: the same broken answer again would only cost the same bytes.
    expect(server.requests).toBe(1);
    // What the error keeps, as an app would log it, stays far below the cap.
    expect(JSON.stringify(tooLarge).length).toBeLessThan(CAP);
    expect(JSON.stringify(tooLarge)).not.toContain(TEST_API_KEY);
    // The server could only push what fits in the socket buffers before the client hung up.
    expect(server.sentBytes).toBeLessThan(HUNDRED_MB / 4);
    expect(rssGrowth).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses an announced Content-Length above the cap before reading the body', async () => {
    server.answer = { status: 200, declareLength: true };
    const payments = await boot();
    const error = await payments.paymentIntents.retrieve(INTENT_ID).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PaymentsResponseTooLargeError);
    expect(server.sentBytes).toBeLessThan(HUNDRED_MB / 4);
  });

  it('an error status with a huge body is a PaymentsResponseTooLargeError carrying that status, and keeps no body', async () => {
    server.answer = { status: 500, declareLength: false, prefix: '{"error":"' };
    const payments = await boot({ maxResponseBytes: CAP, maxRetries: 0 });
    const error = (await payments
      .request({ method: 'POST', path: '/payment_intents', body: {} })
      .catch((caught: unknown) => caught)) as PaymentsResponseTooLargeError;
    expect(error).toBeInstanceOf(PaymentsResponseTooLargeError);
    expect(error.status).toBe(500);
    expect(error.body).toBeUndefined();
  });

  it('uses a default cap of 4 MiB when http.maxResponseBytes is not set', async () => {
    const payments = await boot({ maxRetries: 0 });
    const error = await payments.paymentIntents.retrieve(INTENT_ID).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'PaymentsResponseTooLargeError', maxResponseBytes: 4 * 1024 * 1024 });
  });

  it('refuses a nonsensical http.maxResponseBytes at boot, naming the option', async () => {
    await expect(bootClient(baseUrl, { http: { maxResponseBytes: 0 } })).rejects.toThrow(PaymentsConfigurationError);
    await expect(bootClient(baseUrl, { http: { maxResponseBytes: 0 } })).rejects.toThrow(/`http\.maxResponseBytes`/);
    await expect(bootClient(baseUrl, { http: { maxResponseBytes: 1.5 } })).rejects.toThrow(/`http\.maxResponseBytes`/);
  });
});
