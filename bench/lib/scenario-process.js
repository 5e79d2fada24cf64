import { fork } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const READY_TIMEOUT_MS = 60_000;
const REPLY_TIMEOUT_MS = 30_000;

let logDir;
let logCount = 0;

/** Removes the temporary folder of the children's output (call once every child is closed). */
export function removeScenarioLogs() {
  if (logDir) rmSync(logDir, { recursive: true, force: true });
  logDir = undefined;
}

/**
 * The parent side of the scenario protocol (see scenario-ipc.js): starts a scenario server in its own
 * Node process, waits until it listens, and drives it. The child's output goes to a temporary file
 * (not a pipe to this process: a receiver logging a line per delivery would block on a full pipe
 * while this process is busy generating load), read back only to explain a failure, removed on close.
 */
export class ScenarioProcess {
  /** @param {{ file: string, options?: object, execArgv?: string[], cwd?: string }} spec */
  static async start(spec) {
    logDir ??= mkdtempSync(join(tmpdir(), 'nestjs-payments-bench-'));
    const logFile = join(logDir, `scenario-${++logCount}.log`);
    const fd = openSync(logFile, 'w');
    const child = fork(spec.file, [], {
      cwd: spec.cwd,
      execArgv: spec.execArgv ?? [],
      env: { ...process.env, NODE_ENV: 'production', BENCH_SCENARIO_OPTIONS: JSON.stringify(spec.options ?? {}) },
      stdio: ['ignore', fd, fd, 'ipc'],
    });
    closeSync(fd);
    const scenario = new ScenarioProcess(child, logFile);
    const ready = await scenario.#reply('ready', READY_TIMEOUT_MS);
    scenario.port = ready.port;
    scenario.nestVersion = ready.nestVersion;
    return scenario;
  }

  constructor(child, logFile) {
    this.child = child;
    this.logFile = logFile;
    this.exited = undefined;
    child.on('exit', (code, signal) => {
      this.exited = { code, signal };
    });
  }

  /** Resets the child's counters and CPU clock just before the measured load. */
  async mark() {
    this.child.send({ type: 'mark' });
    await this.#reply('marked');
  }

  /** Counters and CPU time since `mark()`. */
  async report() {
    this.child.send({ type: 'report' });
    return this.#reply('report');
  }

  /** Asks the child to close its app and exit; kills it if it does not within 15 s. */
  async close() {
    if (this.exited) return this.exited;
    const exited = once(this.child, 'exit');
    try {
      this.child.send({ type: 'close' });
    } catch {
      // channel already gone
    }
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    if (this.exited.code === 0) rmSync(this.logFile, { force: true });
    return this.exited;
  }

  /** The last 8 KB the child wrote to stdout and stderr. */
  get tail() {
    try {
      return readFileSync(this.logFile, 'utf8').slice(-8192);
    } catch {
      return '';
    }
  }

  /** Why the child is gone, with its last output lines, for a failure message. */
  describeFailure(what) {
    const how = this.exited ? `exited (code ${this.exited.code}, signal ${this.exited.signal})` : 'did not answer';
    const lines = this.tail.split('\n').filter(Boolean).slice(-15);
    return `${what}: scenario process ${how}. Last output (${this.logFile}):\n  ${lines.join('\n  ')}`;
  }

  #reply(type, timeoutMs = REPLY_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
      };
      const onMessage = (message) => {
        if (message?.type !== type) return;
        cleanup();
        resolve(message);
      };
      const onExit = () => {
        cleanup();
        setImmediate(() => reject(new Error(this.describeFailure(`waiting for '${type}'`))));
      };
      const timer = setTimeout(() => {
        cleanup();
        this.child.kill('SIGKILL');
        reject(new Error(this.describeFailure(`no '${type}' within ${timeoutMs} ms`)));
      }, timeoutMs);
      this.child.on('message', onMessage);
      this.child.on('exit', onExit);
    });
  }
}
