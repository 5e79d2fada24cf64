import * as http from 'node:http';
import * as net from 'node:net';
import type { BuiltRequest } from './fuzz-request.builder.js';

/** What came back: a status and body, or no answer at all (the connection closed, or the time ran out). */
export type FuzzAnswer =
  { status: number; body: string } | { status: undefined; reason: 'closed' | 'timeout' | 'error'; detail: string };

const TIMEOUT_MS = 15_000;
const MAX_READ = 64 * 1024;

/**
 * Sends fuzz requests to one receiver over real HTTP: a keep-alive agent for ordinary requests, a
 * raw socket for chunked bodies and malformed messages. Nothing here judges the answer.
 */
export class FuzzRequestSender {
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  /** Requests re-sent because a kept-alive socket was closed under them before any answer (Node's documented race). */
  staleSocketRetries = 0;

  constructor(private readonly port: number) {}

  send(request: BuiltRequest): Promise<FuzzAnswer> {
    if (request.transport === 'raw') return this.#raw(request.rawMessage!);
    if (request.transport === 'chunked') return this.#raw(this.#chunkedMessage(request));
    return this.#http(request, true);
  }

  close(): void {
    this.#agent.destroy();
  }

  #http(request: BuiltRequest, mayRetry: boolean): Promise<FuzzAnswer> {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of request.headers) {
      const existing = headers[name];
      headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
    return new Promise<FuzzAnswer>((resolve) => {
      const req = http.request(
        { host: '127.0.0.1', port: this.port, method: request.method, path: request.path, headers, agent: this.#agent },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            if (size < MAX_READ) chunks.push(chunk);
            size += chunk.length;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', (error) => resolve({ status: res.statusCode ?? 0, body: `(read error ${error.message})` }));
        },
      );
      req.setTimeout(TIMEOUT_MS, () => {
        req.destroy();
        resolve({ status: undefined, reason: 'timeout', detail: `no answer within ${TIMEOUT_MS} ms` });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (mayRetry && req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
          this.staleSocketRetries += 1;
          resolve(this.#http(request, false));
          return;
        }
        resolve({ status: undefined, reason: 'error', detail: error.code ?? error.message });
      });
      req.end(request.body);
    });
  }

  #chunkedMessage(request: BuiltRequest): Buffer {
    const head = [
      `${request.method} ${request.path} HTTP/1.1`,
      `Host: 127.0.0.1:${this.port}`,
      ...request.headers.map(([n, v]) => `${n}: ${v}`),
      'Transfer-Encoding: chunked',
      'Connection: close',
    ];
    const parts: Buffer[] = [Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1')];
    let offset = 0;
    let i = 0;
    while (offset < request.body.length) {
      const size = Math.min(
        request.chunkSizes[i % Math.max(1, request.chunkSizes.length)] ?? 64,
        request.body.length - offset,
      );
      parts.push(
        Buffer.from(`${size.toString(16)}\r\n`, 'latin1'),
        request.body.subarray(offset, offset + size),
        Buffer.from('\r\n', 'latin1'),
      );
      offset += size;
      i += 1;
    }
    parts.push(Buffer.from('0\r\n\r\n', 'latin1'));
    return Buffer.concat(parts);
  }

  /** Writes `message`, half-closes, and reads until the server closes; the status comes from the first line. */
  #raw(message: Buffer): Promise<FuzzAnswer> {
    return new Promise<FuzzAnswer>((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (answer: FuzzAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        resolve(answer);
      };
      const socket = net.connect(this.port, '127.0.0.1', () => socket.end(message));
      const timer = setTimeout(
        () => finish({ status: undefined, reason: 'timeout', detail: `no close within ${TIMEOUT_MS} ms` }),
        TIMEOUT_MS,
      );
      socket.on('data', (chunk: Buffer) => {
        if (size < MAX_READ) chunks.push(chunk);
        size += chunk.length;
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        if (chunks.length === 0) finish({ status: undefined, reason: 'error', detail: error.code ?? error.message });
      });
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('latin1');
        const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
        if (match) finish({ status: Number(match[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
        else
          finish({
            status: undefined,
            reason: 'closed',
            detail: text === '' ? 'closed without an answer' : 'answer without a status line',
          });
      });
    });
  }
}
