import autocannon from 'autocannon';
import { percentile } from './stats.js';

/**
 * One autocannon run (used as a library) against 127.0.0.1:`port`: every request takes the next
 * delivery of `pool` (fresh id, pre-signed). Latencies are recorded here at full resolution from the
 * 'response' events (autocannon's own histogram has 1 ms buckets, too coarse for a local route).
 *
 * @returns {Promise<{ requests: number, rps: number, p50: number, p99: number, non2xx: number,
 *   errors: number, timeouts: number, statusCodes: Record<string, number>, durationS: number }>}
 */
export async function loadRun({ port, path, pool, connections, durationS, method = 'POST' }) {
  const samples = new Float64Array(2_000_000);
  let count = 0;
  const statusCodes = {};
  let non2xx = 0;
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    pipelining: 1,
    duration: durationS,
    timeout: 10,
    requests: [
      {
        method,
        path,
        setupRequest(request) {
          const delivery = pool.next();
          request.body = delivery.body;
          request.headers = delivery.headers;
          return request;
        },
      },
    ],
  });
  instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
    if (count < samples.length) samples[count++] = responseTimeMs;
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (statusCode < 200 || statusCode > 299) non2xx++;
  });
  const result = await instance;
  const sorted = samples.subarray(0, count).sort();
  const elapsedS = result.duration;
  return {
    requests: result.requests.total,
    rps: result.requests.total / elapsedS,
    p50: percentile(sorted, count, 50),
    p99: percentile(sorted, count, 99),
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    durationS: elapsedS,
  };
}
