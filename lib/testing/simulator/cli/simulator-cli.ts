import { createInterface } from 'node:readline';
import { CLI_HELP } from './cli.messages.js';
import { CliUsageError, parseCliArguments } from './cli-options.js';
import { runCommandLine } from './cli-commands.js';
import { DeliveryLog } from './delivery-log.js';
import { SimulatorSession } from './simulator-session.js';

/** Where the CLI reads commands and writes; the process's own by default (tests pass their own). */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  out(line: string): void;
  err(line: string): void;
  /** Registers the stop signals (SIGINT, SIGTERM); returns a function that removes them. */
  onSignal(stop: () => void): () => void;
}

/**
 * The lines printed once the simulator listens: where it is, and the values the app needs. With an
 * asymmetric scheme, the public key the app verifies with: the private key is never printed.
 */
export function startupLines(session: SimulatorSession): string[] {
  const endpoint = session.endpoint;
  const publicKey = session.publicKey;
  const lines = [
    'nestjs-payments simulator: a local payment service (test values only, printed on purpose)',
    `  base URL         ${session.baseUrl}`,
    `  API key          ${session.apiKey}`,
  ];
  if (endpoint === undefined) {
    lines.push('  webhooks         none: pass --forward-to <your app>/payments/webhooks to receive them');
  } else {
    lines.push(`  forwarding to    ${endpoint.url} (${session.options.scheme}, endpoint ${endpoint.id})`);
    if (publicKey === undefined) lines.push(`  endpoint secret  ${endpoint.secret}`);
    else
      lines.push(
        `  public key       ${publicKey}`,
        session.options.secret === undefined
          ? '  private key      a fresh one, held by this process only (never printed; --secret whsk_... keeps one)'
          : '  private key      yours (--secret), in use (never printed)',
      );
  }
  lines.push(
    '',
    'For your app (e.g. its .env):',
    `  PAYMENTS_BASE_URL=${session.baseUrl}`,
    `  PAYMENTS_API_KEY=${session.apiKey}`,
    '  PAYMENTS_ALLOW_INSECURE_HTTP=true',
  );
  if (publicKey !== undefined) {
    lines.push(
      `  PAYMENTS_WEBHOOK_PUBLIC_KEY=${publicKey}`,
      '  # verifier: standardWebhooksEd25519({ publicKeys: process.env.PAYMENTS_WEBHOOK_PUBLIC_KEY })',
    );
  } else if (endpoint !== undefined) lines.push(`  PAYMENTS_WEBHOOK_SECRET=${endpoint.secret}`);
  lines.push('', 'Ready. Type `help` for the commands, Ctrl-C to stop.');
  return lines;
}

/**
 * `npx nestjs-payments simulator ...`: resolves with the exit code once the simulator has stopped
 * (0 on `quit`, SIGINT or SIGTERM; 2 on a refused command line; 1 when it could not start).
 */
export async function runSimulatorCli(argv: readonly string[], io: CliIo): Promise<number> {
  let session: SimulatorSession;
  try {
    const request = parseCliArguments(argv);
    if (request.help) {
      io.out(CLI_HELP);
      return 0;
    }
    session = new SimulatorSession(request.options);
    await session.start();
  } catch (error) {
    if (error instanceof CliUsageError) {
      io.err(`nestjs-payments: ${error.message}`);
      return 2;
    }
    // Our own errors never carry a key or a secret; the message alone, no stack.
    io.err(`nestjs-payments: the simulator could not start: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }

  const log = new DeliveryLog(session.simulator, io.out);
  const running = session;
  return new Promise<number>((resolve) => {
    // Stdin may end (a pipe, `< /dev/null`): the simulator keeps serving until quit or a signal.
    const rl = createInterface({ input: io.stdin, terminal: false });
    let stopping = false;
    let queue = Promise.resolve();
    const stop = (): void => {
      if (stopping) return;
      stopping = true;
      removeSignals();
      rl.close();
      log.flush();
      log.stop();
      void running.stop().then(() => {
        io.out('simulator stopped');
        resolve(0);
      });
    };
    // Before the first line is printed: whoever reads "Ready." may signal at once.
    const removeSignals = io.onSignal(stop);
    for (const line of startupLines(running)) io.out(line);
    log.start();
    rl.on('line', (line) => {
      // One command at a time, in the order typed.
      queue = queue.then(async () => {
        if (stopping) return;
        const result = await runCommandLine(line, running);
        log.flush();
        if (result.output !== '') io.out(result.output);
        if (result.quit === true) stop();
      });
    });
  });
}
