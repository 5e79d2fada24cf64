// The consumer matrix's check of `npx nestjs-payments simulator` (issue 32, item 4), as a developer runs
// it from an app folder where the packed tarball is installed, on the Node running run.mjs only:
//   1. the app's own AppModule (dist/, as compiled by run.mjs) boots with PAYMENTS_BASE_URL and
//      PAYMENTS_API_KEY naming the simulator about to start (a free port, a key it will be told);
//   2. `npx --no nestjs-payments simulator --port <that port> --api-key <key> --secret <the app's
//      WEBHOOK_SECRET> --forward-to <app>/payments/webhooks` (`--no`: the local bin or nothing, never
//      the registry);
//   3. a payment through the CLI's API (`POST /payment_intents`, then the checkout's `POST
//      /embed/confirm`), and the app's handler must run exactly once from the forwarded, signed webhook;
//   4. SIGINT to its process group (a terminal's Ctrl-C): it stops cleanly and the port is closed.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** The app it runs in (a CommonJS app exporting AppModule, WEBHOOK_SECRET, FulfilmentService.runs). */
export const SIMULATOR_CLI_APP = 'nest11-cjs';

const KEY = 'sk_test_consumer_cli';

// Boots the app's AppModule; prints `{ url, secret }`, then answers `runs` and `quit` on stdin.
const BOOT = `require('reflect-metadata');
const { NestFactory } = require('@nestjs/core');
const { AppModule, WEBHOOK_SECRET } = require('./dist/app.module');
const { FulfilmentService } = require('./dist/fulfilment.service');
(async () => {
  const app = await NestFactory.create(AppModule, { rawBody: true, logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  console.log(JSON.stringify({ url: await app.getUrl(), secret: WEBHOOK_SECRET }));
  require('node:readline').createInterface({ input: process.stdin }).on('line', async (line) => {
    if (line === 'runs') console.log('runs ' + app.get(FulfilmentService).runs);
    if (line === 'quit') { await app.close(); process.exit(0); }
  });
})().catch((error) => { console.error(error); process.exit(1); });
`;

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A child whose output is kept, with `waitFor(pattern)` (bounded) and `send(line)`. */
function start(command, args, cwd, env, detached = false) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached,
  });
  const proc = { child, out: '', waiters: new Set() };
  const append = (chunk) => {
    proc.out += chunk;
    for (const waiter of [...proc.waiters]) waiter();
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  proc.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  proc.send = (line) => child.stdin.write(`${line}\n`);
  proc.waitFor = (pattern, from = 0, timeoutMs = 20_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(proc.out.slice(from));
        if (!match) return;
        proc.waiters.delete(check);
        clearTimeout(timer);
        resolve(match);
      };
      const timer = setTimeout(() => {
        proc.waiters.delete(check);
        reject(new Error(`${command} ${args.join(' ')}: no ${pattern} within ${timeoutMs} ms; output:\n${proc.out}`));
      }, timeoutMs);
      proc.waiters.add(check);
      check();
    });
  // A detached child leads its own process group (npx, its shell, the CLI): signals go to all of them,
  // as a terminal's Ctrl-C does; npm exec does not pass a signal on to the command it runs.
  proc.signal = (signal) => (detached ? process.kill(-child.pid, signal) : child.kill(signal));
  proc.kill = () => {
    try {
      proc.signal('SIGKILL');
    } catch {
      // already gone
    }
  };
  return proc;
}

async function api(baseUrl, method, path, body, headers = { 'x-api-key': KEY, 'x-api-version': '1' }) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Runs the check in the app folder `dir`; resolves with a one-line summary, rejects with the reason. */
export async function checkSimulatorCli(dir) {
  const simPort = await freePort();
  const baseUrl = `http://127.0.0.1:${simPort}`;
  await writeFile(join(dir, 'simulator-cli-app.cjs'), BOOT);
  const app = start(process.execPath, ['simulator-cli-app.cjs'], dir, {
    PAYMENTS_BASE_URL: baseUrl,
    PAYMENTS_API_KEY: KEY,
  });
  let cli;
  try {
    const { url, secret } = JSON.parse((await app.waitFor(/^\{.*\}$/m))[0]);
    cli = start(
      process.platform === 'win32' ? 'npx.cmd' : 'npx',
      [
        '--no',
        'nestjs-payments',
        'simulator',
        '--port',
        String(simPort),
        '--api-key',
        KEY,
        '--secret',
        secret,
        '--forward-to',
        `${url}/payments/webhooks`,
      ],
      dir,
      {},
      true,
    );
    await cli.waitFor(/^Ready\./m);
    for (const line of [`  base URL         ${baseUrl}`, `  API key          ${KEY}`, `  endpoint secret  ${secret}`]) {
      if (!cli.out.includes(line))
        throw new Error(`the CLI did not print '${line.trim().split(/\s+/)[0]} ...':\n${cli.out}`);
    }
    // A payment through the CLI's API: create the intent, then confirm it as the checkout iframe does.
    const intent = await api(baseUrl, 'POST', '/payment_intents', { amount: 1500 });
    await api(
      baseUrl,
      'POST',
      '/embed/confirm',
      { outcome: 'succeeded' },
      { authorization: `Embed ${intent.embed_token}` },
    );
    await cli.waitFor(/<-- \[200\] payment_intent\.succeeded/);
    const from = app.out.length;
    app.send('runs');
    const runs = Number((await app.waitFor(/^runs (\d+)$/m, from))[1]);
    if (runs !== 1) throw new Error(`the app's handler ran ${runs} times for one forwarded payment; expected once`);
    cli.signal('SIGINT'); // Ctrl-C
    const exit = await Promise.race([
      cli.exited,
      new Promise((resolve) => setTimeout(() => resolve({ code: 'still running 20 s after SIGINT' }), 20_000)),
    ]);
    // npm exec itself dies of the SIGINT it receives too (npm's doing, as in a terminal); the CLI's own
    // clean stop (server closed, exit 0) prints "simulator stopped" (its exit code: test/e2e/testing/).
    if (exit.code !== 0 && exit.signal !== 'SIGINT')
      throw new Error(`npx nestjs-payments simulator: SIGINT ended it with ${JSON.stringify(exit)}:\n${cli.out}`);
    const refused = await fetch(baseUrl).then(
      () => false,
      () => true,
    );
    if (!refused) throw new Error('the simulator still answers after SIGINT');
    await cli.waitFor(/simulator stopped/);
    app.send('quit');
    await app.exited;
    return `npx nestjs-payments simulator: forwarded a signed payment_intent.succeeded to the app, handled once (answered 200), stopped cleanly by SIGINT (Node ${process.version})`;
  } finally {
    cli?.kill();
    app.kill();
  }
}
