import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deadPort } from '../../redis-test.util.js';

/*
 * A private PostgreSQL 15 cluster for the fault matrix: the cells that restart the server must not
 * touch the shared one (other suites use it). initdb refuses root, so as root (CI) every command runs
 * as the `postgres` user, in a temp dir it owns. Trust auth, Unix socket in the same dir.
 */

/** PG_BIN, else /usr/lib/postgresql/15/bin, else the newest installed major. */
const BIN =
  process.env['PG_BIN'] ??
  ['15', ...(existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort().reverse() : [])]
    .map((major) => `/usr/lib/postgresql/${major}/bin`)
    .find((dir) => existsSync(join(dir, 'initdb'))) ??
  '/usr/lib/postgresql/15/bin';

export interface PrivatePostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  /** `pg_ctl restart -m fast`: every connection ends, the server is back when it resolves. */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  remove(): void;
}

function asPostgresArgs(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}
function asPostgres(command: string, args: string[]): void {
  const [file, argv] = asPostgresArgs(command, args);
  execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'payments-pg-'));
  chmodSync(dir, 0o700);
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  const data = join(dir, 'data');
  const port = await deadPort(); // free a moment ago
  const ctlArgs = (...args: string[]) => [
    '-D',
    data,
    '-l',
    join(dir, 'log'),
    '-o',
    `-p ${port} -k ${dir} -c fsync=off -c max_connections=200`,
    '-w',
    ...args,
  ];
  const ctl = (...args: string[]) => asPostgres(join(BIN, 'pg_ctl'), ctlArgs(...args));
  try {
    asPostgres(join(BIN, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    ctl('start');
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    restart: async () => {
      const [file, argv] = asPostgresArgs(join(BIN, 'pg_ctl'), ctlArgs('-m', 'fast', 'restart'));
      await promisify(execFile)(file, argv, { timeout: 60_000 });
    },
    remove: () => {
      try {
        ctl('-m', 'immediate', 'stop');
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
