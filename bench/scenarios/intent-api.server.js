/**
 * A local stand-in of the service's `GET /payment_intents/{id}` for the client benchmark: plain
 * node:http, answers a fixed PaymentIntent (JSON) for any UUID, and counts requests and the TCP
 * connections it accepted since the last 'mark' (sockets the client opened).
 */
import { createServer } from 'node:http';
import { handlerCounter, serveScenario } from '../lib/scenario-ipc.js';

let connections = 0;
const server = createServer((req, res) => {
  const match = /^\/payment_intents\/([0-9a-f-]{36})$/.exec(req.url ?? '');
  if (req.method !== 'GET' || !match) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
    return;
  }
  handlerCounter.runs++;
  const body = JSON.stringify({
    id: match[1],
    state: 'succeeded',
    amount: 4999,
    currency: 'EUR',
    description: 'Order 10042',
    metadata: { order_id: '10042' },
    created_at: '2026-11-22T12:00:00Z',
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
});
server.keepAliveTimeout = 60_000;
server.on('connection', () => {
  connections++;
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

serveScenario({
  port: server.address().port,
  nestVersion: 'n/a (node:http)',
  onMark: () => {
    connections = 0;
  },
  extra: () => ({ connections }),
  close: () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
});
