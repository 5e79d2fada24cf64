import * as http from 'node:http';
import * as https from 'node:https';

/** What one attempt came to: an HTTP status, or no answer (`timeout`, a system error code, `connection_closed`). */
export type PostOutcome = { status: number } | { error: string };

/**
 * One delivery attempt: a POST with its own connection (no agent, `connection: close`), bounded by
 * `timeoutMs`; never rejects (a failure is `{ error }`). The request stays in `inflight` while it runs,
 * so the engine can abort it on stop.
 */
export function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  inflight: Set<http.ClientRequest>,
): Promise<PostOutcome> {
  return new Promise<PostOutcome>((resolve) => {
    let done = false;
    let timedOut = false;
    const finish = (outcome: PostOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      inflight.delete(request);
      resolve(outcome);
    };
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : http;
    const request = transport.request(
      target,
      {
        method: 'POST',
        agent: false,
        headers: {
          ...headers,
          'content-length': String(Buffer.byteLength(body)),
          connection: 'close',
          'user-agent': 'nestjs-payments-simulator',
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => finish({ status: response.statusCode ?? 0 }));
        response.on('error', () => finish({ status: response.statusCode ?? 0 }));
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({ error: timedOut ? 'timeout' : (error.code ?? 'network_error') }),
    );
    request.on('close', () => finish({ error: timedOut ? 'timeout' : 'connection_closed' }));
    inflight.add(request);
    request.end(body);
  });
}
