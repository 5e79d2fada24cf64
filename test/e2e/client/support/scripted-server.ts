import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaderNames: string[];
  body: string;
}

/** How the server answers one request: a status (with headers and body), no answer ('hang'), or a dropped connection ('reset'). */
export type ScriptedAnswer = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang' | 'reset';

/**
 * A real HTTP server on loopback that answers from a script (the last answer repeats), records every
 * request and counts TCP connections. Not a mock of axios: the client goes through Node's network stack.
 */
export class ScriptedServer {
  readonly requests: RecordedRequest[] = [];
  connections = 0;
  private script: ScriptedAnswer[] = [{ status: 200, body: {} }];
  private readonly server: Server;
  private readonly hanging: ServerResponse[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const names: string[] = [];
        for (let i = 0; i < req.rawHeaders.length; i += 2) names.push(req.rawHeaders[i]!);
        this.requests.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          rawHeaderNames: names,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        const answer = this.script.length > 1 ? this.script.shift()! : this.script[0]!;
        if (answer === 'hang') {
          this.hanging.push(res);
          return;
        }
        if (answer === 'reset') {
          req.socket.destroy();
          return;
        }
        const headers: Record<string, string> = { ...(answer.headers ?? {}) };
        let payload = '';
        if (answer.body !== undefined) {
          if (typeof answer.body === 'string') {
            payload = answer.body;
            headers['content-type'] ??= 'text/plain';
          } else {
            payload = JSON.stringify(answer.body);
            headers['content-type'] ??= 'application/json';
          }
        }
        res.writeHead(answer.status, headers);
        res.end(payload);
      });
    });
    this.server.on('connection', () => {
      this.connections += 1;
    });
  }

  /** Sets the answers, in order; the last one repeats. */
  answer(...script: ScriptedAnswer[]): this {
    this.script = script;
    return this;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** An address on loopback where nothing listens (a server was bound there, then closed). */
export async function refusedAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
