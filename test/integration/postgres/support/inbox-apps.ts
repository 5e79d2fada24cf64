import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { transpileToCache } from '../../../fixtures/transpile.fixture.js';

/** JavaScript of lib/ and the merchant app, transpiled (no type check: `npm run typecheck` does that) into a folder under node_modules/.cache. */
export interface InboxAppsBuild {
  main: string;
  remove(): void;
}

export function buildInboxApps(): InboxAppsBuild {
  const build = transpileToCache('payments-inbox-apps', ['lib', 'test/integration/postgres/apps']);
  return { main: join(build.dir, 'test/integration/postgres/apps/inbox-merchant.main.js'), remove: build.remove };
}

export interface MerchantProcess {
  port: number;
  url: string;
  child: ChildProcess;
  /** Resolves when the process has exited (any way). */
  exited: Promise<number | null>;
  stderr(): string;
  /** What it printed on stdout (Nest's warn and log lines), the last 20 kB. */
  stdout(): string;
}

/** Starts the merchant app and resolves once it listens (or rejects with its stderr when it exits first). */
export function startMerchant(main: string, env: Record<string, string>, timeoutMs = 60_000): Promise<MerchantProcess> {
  const child = spawn(process.execPath, [main], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`merchant did not start within ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      out = (out + chunk.toString()).slice(-20_000);
      const match = /listening (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        const port = Number(match[1]);
        resolve({
          port,
          url: `http://127.0.0.1:${port}/payments/webhooks`,
          child,
          exited,
          stderr: () => err,
          stdout: () => out,
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`merchant exited (${code}) before listening: ${err}`));
    });
  });
}

/** SIGTERM, then SIGKILL if it has not exited within 10 s. */
export async function stopMerchant(merchant: MerchantProcess | undefined): Promise<void> {
  if (!merchant || merchant.child.exitCode !== null || merchant.child.signalCode !== null) return;
  merchant.child.kill('SIGTERM');
  const timer = setTimeout(() => merchant.child.kill('SIGKILL'), 10_000);
  await merchant.exited;
  clearTimeout(timer);
}
