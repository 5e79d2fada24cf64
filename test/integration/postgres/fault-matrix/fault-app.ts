import { startMerchant, stopMerchant, type MerchantProcess } from '../support/inbox-apps.js';

/**
 * One fault-merchant process (apps/fault-merchant.main.ts) of a column of the matrix: restarted after
 * an injected SIGKILL; any other exit is counted as a crash.
 */
export class FaultApp {
  private process: MerchantProcess | undefined;
  private lines: string[] = [];
  private listeners: Array<(line: string) => void> = [];
  private expecting: string | undefined;
  unexpectedExits = 0;

  constructor(
    private readonly main: string,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return this.process!.url;
  }

  get alive(): boolean {
    const child = this.process?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  lastStderr(): string {
    return (this.process?.stderr() ?? '').slice(-1500);
  }

  /** Node's report of an unhandled rejection, if the process printed one. */
  unhandled(): string | undefined {
    return /Unhandled(PromiseRejection| rejection)[^\n]*/i.exec(this.process?.stderr() ?? '')?.[0];
  }

  async start(): Promise<void> {
    const merchant = await startMerchant(this.main, this.env);
    this.process = merchant;
    let buffered = '';
    merchant.child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const line of parts) {
        this.lines.push(line);
        for (const listener of [...this.listeners]) listener(line);
      }
    });
    void merchant.exited.then(() => {
      if (this.expecting === undefined || merchant.child.signalCode !== 'SIGKILL') this.unexpectedExits += 1;
    });
  }

  /** Resolves when `line` is printed (false after `timeoutMs`). */
  waitLine(line: string, timeoutMs: number): Promise<boolean> {
    if (this.lines.includes(line)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const listener = (printed: string): void => {
        if (printed !== line) return;
        done(true);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (value: boolean): void => {
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
        resolve(value);
      };
      this.listeners.push(listener);
    });
  }

  /** Resolves true once the process announced `killing <fault>` and died of SIGKILL. */
  async expectKill(fault: string, timeoutMs = 15_000): Promise<boolean> {
    const merchant = this.process!;
    this.expecting = fault;
    try {
      const announced = await this.waitLine(`killing ${fault}`, timeoutMs);
      const exited = await Promise.race([merchant.exited.then(() => true), delay(timeoutMs).then(() => false)]);
      return announced && exited && merchant.child.signalCode === 'SIGKILL';
    } finally {
      this.lines = [];
      // The exit handler runs before this (same promise, registered first).
      this.expecting = undefined;
    }
  }

  async stop(): Promise<void> {
    await stopMerchant(this.process);
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
