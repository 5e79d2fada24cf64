import type { INestApplication, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer } from 'node:net';
import { PaymentsModule, standardWebhooksVerifier } from '../../../../../lib/index.js';
import type { PaymentsWebhooksOptions } from '../../../../../lib/index.js';

/** A port free on 127.0.0.1 right now (for an app the CLI must forward to before it listens). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The value printed after `label` in the CLI's start-up lines (`  base URL         http://...`). */
export function printed(stdout: string, label: string): string {
  const match = new RegExp(`^  ${label} +(\\S+)`, 'm').exec(stdout);
  if (match === null) throw new Error(`no '${label}' line in:\n${stdout}`);
  return match[1]!;
}

/** `node <main.js> ...args` with its output kept line by line, lines typed on its stdin. */
export class CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #waiters = new Set<() => void>();

  constructor(main: string, args: readonly string[]) {
    this.child = spawn(process.execPath, [main, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => this.#append('stdout', chunk));
    this.child.stderr.on('data', (chunk: Buffer) => this.#append('stderr', chunk));
    this.exited = new Promise((resolve) => this.child.once('close', (code, signal) => resolve({ code, signal })));
  }

  /** Types one command. */
  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** Resolves with the first match of `pattern` in stdout after `from` (a stdout length); rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, from = 0, timeoutMs = 20_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = pattern.exec(this.stdout.slice(from));
        if (match === null) return false;
        this.#waiters.delete(listener);
        clearTimeout(timer);
        resolve(match);
        return true;
      };
      const listener = (): void => void check();
      const timer = setTimeout(() => {
        this.#waiters.delete(listener);
        reject(new Error(`no ${pattern} in the CLI's output:\n${this.stdout}\n${this.stderr}`));
      }, timeoutMs);
      if (!check()) this.#waiters.add(listener);
    });
  }

  /** Stops it by force if a test failed half-way. */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  #append(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    this[stream] += chunk.toString();
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/**
 * `simulator --forward-to` a port, then a Nest app listening there, configured with the values the CLI
 * printed (as a merchant would copy them): `providers` its handlers, `webhooks` merged into its receiver.
 */
export async function cliForwardingToApp(
  main: string,
  providers: Type<unknown>[],
  webhooks: Partial<PaymentsWebhooksOptions> = {},
): Promise<{ sim: CliProcess; app: INestApplication }> {
  const port = await freePort();
  const sim = new CliProcess(main, [
    'simulator',
    '--port',
    '0',
    '--forward-to',
    `http://127.0.0.1:${port}/payments/webhooks`,
    '--retry-schedule',
    '50,100',
  ]);
  await sim.waitFor(/^Ready\./m);
  const moduleRef = await Test.createTestingModule({
    imports: [
      PaymentsModule.forRoot({
        apiKey: printed(sim.stdout, 'API key'),
        environment: 'sandbox',
        baseUrl: printed(sim.stdout, 'base URL'),
        allowInsecureHttp: true,
        webhooks: {
          verifier: standardWebhooksVerifier({ secrets: printed(sim.stdout, 'endpoint secret') }),
          ...webhooks,
        },
      }),
    ],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ rawBody: true, logger: false });
  await app.listen(port, '127.0.0.1');
  return { sim, app };
}
