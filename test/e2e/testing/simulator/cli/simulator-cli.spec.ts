import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication } from '@nestjs/common';
import { join } from 'node:path';
import { OnPaymentEvent, type PaymentEvent } from '../../../../../lib/index.js';
import { transpileToCache, type TranspiledTree } from '../../../../fixtures/transpile.fixture.js';
import { CliProcess, cliForwardingToApp, printed } from './cli-process.fixture.js';

/*
 * `npx nestjs-payments simulator` (issue 32, item 4), run as a process of its own from lib/ transpiled
 * as is (test/consumers/ runs the packed bin through npx). The receiver is a real Nest app configured
 * with the values the CLI printed.
 */

@Injectable()
class Fulfilment {
  readonly paid: string[] = [];
  @OnPaymentEvent('payment_intent.succeeded')
  onPaid(event: PaymentEvent<'payment_intent.succeeded'>) {
    this.paid.push(event.id);
  }
}

describe('npx nestjs-payments simulator', () => {
  let tree: TranspiledTree;
  let main: string;
  const started: CliProcess[] = [];
  const cli = (...args: string[]): CliProcess => {
    const child = new CliProcess(main, args);
    started.push(child);
    return child;
  };

  beforeAll(() => {
    tree = transpileToCache('payments-cli', ['lib']);
    main = join(tree.dir, 'lib', 'testing', 'simulator', 'cli', 'main.js');
  });
  afterAll(() => {
    for (const child of started) child.kill();
    tree?.remove();
  });

  it('--help lists every flag and command and exits 0', async () => {
    const child = cli('--help');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    for (const word of [
      '--forward-to',
      '--port',
      '--host',
      '--scheme',
      '--hmac-header',
      '--api-key',
      '--secret',
      '--retry-schedule',
      'trigger <event>',
      'drop <n>',
      'delay <ms> [n]',
      'resend <delivery-id>',
      'deliveries',
      'quit',
    ]) {
      expect(child.stdout).toContain(word);
    }
    expect(child.stderr).toBe('');
  });

  it.each([
    [['simulator', '--prot', '4010'], /^nestjs-payments: unknown flag --prot: see --help for the flags\n$/],
    [['simulator', '--port', 'http'], /^nestjs-payments: --port must be an integer from 0 to 65535, .*\n$/],
    [['simulator', '--port'], /^nestjs-payments: flag --port needs a value, .*\n$/],
    [
      ['simulator', '--scheme', 'jwt'],
      /^nestjs-payments: --scheme must be standard-webhooks, standard-webhooks-ed25519 or hmac\n$/,
    ],
    [['simulate'], /^nestjs-payments: unknown command 'simulate': .*\n$/],
    [
      ['simulator', '--port', '0', '--host', '192.0.2.1'],
      /^nestjs-payments: --host is not an address of this machine: .*\n$/,
    ],
  ])('%j exits 2 with one line naming the flag and the fix', async (args, message) => {
    const child = cli(...args);
    expect(await child.exited).toEqual({ code: 2, signal: null });
    expect(child.stderr).toMatch(message);
    expect(child.stdout).toBe('');
  });

  it('a malformed --secret exits 2 without quoting it', async () => {
    const child = cli('simulator', '--forward-to', 'http://127.0.0.1:9/payments/webhooks', '--secret', 'whsec_%%%top');
    expect(await child.exited).toEqual({ code: 2, signal: null });
    expect(child.stderr).toMatch(/^nestjs-payments: --secret is not a Standard Webhooks secret: .*\n$/);
    expect(child.stderr).not.toContain('%%%top');
  });

  describe('forwarding to a Nest app configured with the printed values', () => {
    let sim: CliProcess;
    let app: INestApplication;
    let baseUrl: string;

    beforeAll(async () => {
      ({ sim, app } = await cliForwardingToApp(main, [Fulfilment]));
      baseUrl = printed(sim.stdout, 'base URL');
    }, 60_000);
    afterAll(async () => {
      sim?.kill();
      await app?.close();
    });

    it('prints the base URL, the key, the endpoint and its secret, and the .env lines', () => {
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(printed(sim.stdout, 'API key')).toMatch(/^sk_test_/);
      expect(printed(sim.stdout, 'endpoint secret')).toMatch(/^whsec_/);
      expect(sim.stdout).toContain(`PAYMENTS_BASE_URL=${baseUrl}`);
      expect(sim.stdout).toContain('PAYMENTS_ALLOW_INSECURE_HTTP=true');
    });

    it('`pay` makes a payment whose signed delivery the app handles once (answered 200)', async () => {
      const from = sim.stdout.length;
      sim.send('pay 1500');
      const [, deliveryId] = await sim.waitFor(/<-- \[200\] payment_intent\.succeeded {2}delivery (\S+)/, from);
      expect(deliveryId).toMatch(/^[0-9a-f-]{36}$/);
      expect(app.get(Fulfilment).paid).toHaveLength(1);
    });

    it('`drop 1` drops the next delivery for good: the handler never hears of that payment', async () => {
      const paid = app.get(Fulfilment).paid.length;
      let from = sim.stdout.length;
      sim.send('drop 1');
      await sim.waitFor(/dropping the next 1 delivery/, from);
      sim.send('pay 2500');
      // The confirm emits payment_intent.succeeded then charge.succeeded: the first is dropped.
      await sim.waitFor(/x dropped 1 delivery/, from);
      await sim.waitFor(/<-- \[200\] charge\.succeeded/, from);
      from = sim.stdout.length;
      sim.send('deliveries');
      await sim.waitFor(/dropped by `drop`: 1/, from);
      expect(app.get(Fulfilment).paid).toHaveLength(paid);
    });

    it('`resend <id>` sends a delivery again: answered 200, and the handler does not run twice', async () => {
      const [, deliveryId] = /<-- \[200\] payment_intent\.succeeded {2}delivery (\S+) {2}attempt 1/.exec(sim.stdout)!;
      const from = sim.stdout.length;
      sim.send(`resend ${deliveryId}`);
      await sim.waitFor(
        new RegExp(`<-- \\[200\\] payment_intent\\.succeeded  delivery ${deliveryId}  attempt 2`),
        from,
      );
      expect(app.get(Fulfilment).paid).toHaveLength(1);
    });

    it('`trigger <event> <intent-id>` emits that event for the intent: a new event, answered 200, and the paid intent is not paid twice (a terminal state happens once per intent)', async () => {
      const [, intentId] = /--> payment_intent\.succeeded {2}event \S+ {2}intent (\S+)/.exec(sim.stdout)!;
      const paid = [...app.get(Fulfilment).paid];
      const from = sim.stdout.length;
      sim.send(`trigger payment_intent.succeeded ${intentId}`);
      await sim.waitFor(/emitted payment_intent\.succeeded \(event (\S+)\)/, from);
      await sim.waitFor(/<-- \[200\] payment_intent\.succeeded/, from);
      expect(app.get(Fulfilment).paid).toEqual(paid);
    });

    it('`resend` of an unknown id prints the reason and keeps running', async () => {
      const from = sim.stdout.length;
      sim.send('resend 00000000-0000-4000-8000-000000000000');
      await sim.waitFor(/resend failed: No such webhook request\./, from);
      sim.send('frobnicate');
      await sim.waitFor(/unknown command 'frobnicate'/, from);
    });

    it('SIGINT stops it cleanly: exit 0, the server closed', async () => {
      sim.child.kill('SIGINT');
      expect(await sim.exited).toEqual({ code: 0, signal: null });
      expect(sim.stdout).toMatch(/simulator stopped\n$/);
      await expect(fetch(`${baseUrl}/payment_intents`)).rejects.toThrow();
    });
  });

  it('SIGTERM stops it too, and `quit` as well', async () => {
    const a = cli('simulator', '--port', '0');
    await a.waitFor(/^Ready\./m);
    a.child.kill('SIGTERM');
    expect(await a.exited).toEqual({ code: 0, signal: null });
    const b = cli('simulator', '--port', '0');
    await b.waitFor(/^Ready\./m);
    b.send('quit');
    expect(await b.exited).toEqual({ code: 0, signal: null });
    expect(b.stdout).toMatch(/simulator stopped\n$/);
  }, 60_000);

  it('a port in use exits 2 with one line naming --port', async () => {
    const a = cli('simulator', '--port', '0');
    await a.waitFor(/^Ready\./m);
    const port = new URL(printed(a.stdout, 'base URL')).port;
    const b = cli('simulator', '--port', port);
    expect(await b.exited).toEqual({ code: 2, signal: null });
    expect(b.stderr).toBe(
      `nestjs-payments: port ${port} is in use: pass --port <another port> (or --port 0 for a free one)\n`,
    );
    a.send('quit');
    expect((await a.exited).code).toBe(0);
  }, 60_000);
});
