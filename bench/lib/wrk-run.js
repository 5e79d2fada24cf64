import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LUA = new URL('./wrk-load.lua', import.meta.url).pathname;
const THREADS = 1;

/** Whether wrk (Debian package `wrk`) can run here. */
export function wrkAvailable() {
  return spawnSync('wrk', ['--version']).error === undefined;
}

/** The version wrk prints (`wrk debian/4.1.0-3+b2 [epoll] ...`). */
export function wrkVersion() {
  const out = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return /wrk (\S+)/.exec(`${out.stdout}${out.stderr}`)?.[1];
}

/** Request files by pool and path: written once, reused by every scenario and round that uses the pool. */
const files = new WeakMap();
let dir;

/** The raw HTTP/1.1 request of one delivery. */
function rawRequest(path, { body, headers }) {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`, '', body);
  return Buffer.from(lines.join('\r\n'));
}

/**
 * Writes every delivery of `pool` as fixed-size records (all deliveries of a pool have the same
 * length: same template, ids and signatures of fixed width). Returns undefined if they do not.
 */
function requestFile(pool, path) {
  let byPath = files.get(pool);
  if (!byPath) files.set(pool, (byPath = new Map()));
  const known = byPath.get(path);
  if (known) return known;
  dir ??= mkdtempSync(join(tmpdir(), 'nestjs-payments-wrk-'));
  const file = join(dir, `requests-${byPath.size}-${Date.now()}.bin`);
  const fd = openSync(file, 'w');
  let size;
  try {
    for (const delivery of pool.items) {
      const record = rawRequest(path, delivery);
      size ??= record.length;
      if (record.length !== size) return undefined;
      writeSync(fd, record);
    }
  } finally {
    closeSync(fd);
  }
  const entry = { file, size, count: pool.items.length };
  byPath.set(path, entry);
  return entry;
}

/** Deletes the request files (the run's end). */
export function removeWrkFiles() {
  if (dir && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
}

/**
 * One wrk run (a C load generator in its own process: it takes far less CPU per request than
 * autocannon, so on a 2-core machine the server is measured, not the client) against
 * 127.0.0.1:`port`: every request is the next unused delivery of `pool`, read from a file of
 * pre-signed raw requests. Same result shape as the autocannon run, plus the client's own CPU time.
 * Resolves undefined when the pool's deliveries cannot be written as fixed-size records.
 */
export async function wrkRun({ port, path, pool, connections, durationS }) {
  const requests = requestFile(pool, path);
  if (!requests) return undefined;
  const first = Math.min(pool.cursor, requests.count - 1);
  const count = requests.count - first;
  const args = [
    '-f',
    'cpu %U %S',
    'wrk',
    `-t${Math.min(THREADS, connections)}`,
    `-c${connections}`,
    `-d${durationS}s`,
    '--timeout',
    '10s',
    '-s',
    LUA,
    `http://127.0.0.1:${port}${path}`,
    '--',
    requests.file,
    String(requests.size),
    String(first),
    String(count),
    String(Math.min(THREADS, connections)),
  ];
  const { stdout, stderr, code } = await new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (exit) => resolve({ stdout: out, stderr: err, code: exit }));
  });
  const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${(stderr || stdout).slice(-400)}`);
  const summary = JSON.parse(line);
  const cpu = /cpu ([\d.]+) ([\d.]+)/.exec(stderr);
  const durationSMeasured = summary.durationUs / 1e6;
  const threads = Math.min(THREADS, connections);
  const repeated = summary.wrapped > 0 ? Math.max(0, summary.requests - count) : 0;
  // Thread k sent records first + k + threads * j: the next run starts past the furthest one.
  pool.cursor = summary.wrapped > 0 ? requests.count : Math.min(requests.count, first + threads * summary.furthest);
  pool.repeated = (pool.repeated ?? 0) + repeated;
  const errors = summary.connectErrors + summary.readErrors + summary.writeErrors;
  return {
    requests: summary.requests,
    rps: summary.requests / durationSMeasured,
    p50: summary.p50Us / 1000,
    p99: summary.p99Us / 1000,
    non2xx: summary.non2xx,
    errors,
    timeouts: summary.timeouts,
    // wrk counts non-2xx/3xx answers, not each status: the 2xx are the rest.
    statusCodes: { '2xx': summary.requests - summary.non2xx, other: summary.non2xx },
    durationS: durationSMeasured,
    clientCpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : undefined,
    repeated,
  };
}
