import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One delivery the receiver got. */
export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: { id: string; webhook_id: string; event: string; data: Record<string, unknown>; metadata: unknown };
  answeredWith: number | 'no answer';
}

/** Status to answer the n-th delivery (1-based) with, or 'hang' to never answer. */
export type ReceiverBehaviour = (n: number, delivery: Omit<ReceivedDelivery, 'answeredWith'>) => number | 'hang';

/** A merchant endpoint for tests: records what arrives and answers as told (200 by default). */
export class WebhookReceiver {
  readonly deliveries: ReceivedDelivery[] = [];
  behaviour: ReceiverBehaviour = () => 200;
  #server: http.Server | undefined;
  #waiters: Array<{ count: number; resolve: () => void }> = [];

  async start(): Promise<string> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const partial = { headers: req.headers, rawBody, body: JSON.parse(rawBody) as ReceivedDelivery['body'] };
        const answer = this.behaviour(this.deliveries.length + 1, partial);
        const delivery: ReceivedDelivery = { ...partial, answeredWith: answer === 'hang' ? 'no answer' : answer };
        this.deliveries.push(delivery);
        this.#notify();
        if (answer !== 'hang') res.writeHead(answer).end();
      });
    });
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  }

  /** Resolves once `count` deliveries have arrived (no wall-clock sleeping). */
  waitFor(count: number): Promise<void> {
    if (this.deliveries.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  #notify(): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (this.deliveries.length < w.count) return true;
      w.resolve();
      return false;
    });
  }
}

/** Small client for the simulator's server API. */
export function apiClient(baseUrl: string, apiKey: string | undefined, extraHeaders: Record<string, string> = {}) {
  return async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; headers: Headers }> => {
    const headers: Record<string, string> = { 'x-api-version': '1', ...extraHeaders };
    if (apiKey !== undefined) headers['x-api-key'] = apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
  };
}

/** POST /embed/confirm as the iframe does. */
export async function confirm(
  baseUrl: string,
  embedToken: string | undefined,
  outcome?: string,
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (embedToken !== undefined) headers['authorization'] = `Embed ${embedToken}`;
  const res = await fetch(`${baseUrl}/embed/confirm`, {
    method: 'POST',
    headers,
    body: JSON.stringify(outcome === undefined ? {} : { outcome }),
  });
  return { status: res.status, body: await res.json() };
}
