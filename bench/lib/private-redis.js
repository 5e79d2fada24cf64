/**
 * The bench's own Redis engines (issue 31): redis-server processes it starts, on ports and in a
 * temporary directory of its own, and stops at the end; their pids are what the engine CPU of a Redis
 * scenario counts (not the shared 127.0.0.1:6379, nor other tenants' instances).
 *   startRedis({ port, persistence })  one instance; persistence 'none' (`save ""`, `appendonly no`) or
 *                                      'aof' (production: `appendonly yes`, `appendfsync everysec`)
 *   startCluster({ ports })            a 3-master Cluster (no replicas, no persistence), as .ci/redis-cluster.sh
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function redisServerAvailable() {
  return spawnSync('redis-server', ['--version']).status === 0;
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

async function waitFor(check, what, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms`);
}

function spawnRedis(dir, port, extra) {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no', ...extra],
    { stdio: 'ignore' },
  );
  child.on('error', () => undefined);
  return child;
}

async function stopAll(children, dir) {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => {
            child.kill('SIGKILL');
            resolve();
          }, 5000).unref();
        }),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
}

/** One private redis-server; resolves { port, pids, persistence, stop() }. */
export async function startRedis({ port, persistence = 'none' }) {
  const dir = mkdtempSync(join(tmpdir(), `nestjs-payments-bench-redis-${port}-`));
  const extra = persistence === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
  const child = spawnRedis(dir, port, extra);
  try {
    await waitFor(() => ping(port), `redis-server on port ${port}`);
  } catch (error) {
    await stopAll([child], dir);
    throw error;
  }
  return { port, pids: [child.pid], persistence, stop: () => stopAll([child], dir) };
}

/** A private 3-master Redis Cluster; resolves { nodes: 'host:port,...', pids, stop() }. */
export async function startCluster({ ports }) {
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-payments-bench-cluster-'));
  const children = ports.map((port) =>
    spawnRedis(dir, port, [
      '--appendonly',
      'no',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout',
      '5000',
    ]),
  );
  try {
    for (const port of ports) await waitFor(() => ping(port), `cluster node ${port}`);
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create: ${created.stderr || created.stdout}`);
    await waitFor(
      () =>
        ports.every((p) =>
          /cluster_state:ok/.test(
            spawnSync('redis-cli', ['-p', String(p), 'cluster', 'info'], { encoding: 'utf8' }).stdout ?? '',
          ),
        ),
      'cluster_state:ok',
    );
  } catch (error) {
    await stopAll(children, dir);
    throw error;
  }
  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
    pids: children.map((c) => c.pid),
    stop: () => stopAll(children, dir),
  };
}
