/**
 * The physical limits the bench compares ours with (issue 22): no Nest, no library, just what any
 * webhook receiver must do: read the body, verify the same HMAC (constant time), parse the JSON, drop
 * an id seen before (a Map), answer 200. One on plain `node:http` (a request handler), one on a plain
 * Fastify app (its own buffer body parser). Both run the bench's handler counter once per delivery.
 */
import { verifyAndParse } from './bare-hmac-route.js';
import { WEBHOOK_PATH } from './bench-constants.js';
import { handlerCounter } from './scenario-ipc.js';

const ANSWER = '{"received":true}';

/** A Map of ids seen, as a minimal in-memory dedupe; bounded like the memory store (oldest out first). */
export function dedupe(limit = 100_000) {
  const seen = new Map();
  return (id) => {
    if (seen.has(id)) return false;
    seen.set(id, true);
    if (seen.size > limit) seen.delete(seen.keys().next().value);
    return true;
  };
}

/** `(req, res)` for `http.createServer`: the node:http limit. */
export function createPlainNodeHandler() {
  const fresh = dedupe();
  return (req, res) => {
    if (req.method !== 'POST' || req.url !== WEBHOOK_PATH) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const event = verifyAndParse(Buffer.concat(chunks), req.headers);
      if (event === undefined) {
        res.statusCode = 401;
        res.end('{"error":"invalid_signature"}');
        return;
      }
      if (fresh(event.id)) handlerCounter.runs++;
      res.statusCode = 200;
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.end(ANSWER);
    });
  };
}

/** A plain Fastify app (no Nest) with the same route: the Fastify limit. */
export async function createPlainFastifyApp() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const fresh = dedupe();
  app.post(WEBHOOK_PATH, (request, reply) => {
    const event = verifyAndParse(request.body, request.headers);
    if (event === undefined) return reply.code(401).send({ error: 'invalid_signature' });
    if (fresh(event.id)) handlerCounter.runs++;
    return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(ANSWER);
  });
  await app.ready();
  return app;
}
