import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { OnPaymentEvent, PaymentsModule, type PaymentEvent } from '../../../../../lib/index.js';
import { parseCliArguments, type SimulatorCliOptions } from '../../../../../lib/testing/simulator/cli/cli-options.js';
import { runSimulatorCli, startupLines } from '../../../../../lib/testing/simulator/cli/simulator-cli.js';
import { SimulatorSession } from '../../../../../lib/testing/simulator/cli/simulator-session.js';
import { standardWebhooksEd25519 } from '../../../../../lib/webhooks/index.js';
import { transpileToCache, type TranspiledTree } from '../../../../fixtures/transpile.fixture.js';
import { CliProcess, freePort, printed } from './cli-process.fixture.js';
import { ed25519KeyPair } from '../../../../fixtures/webhooks/ed25519-keys.js';

/*
 * `npx nestjs-payments simulator --scheme standard-webhooks-ed25519` (Standard Webhooks v1a): the
 * simulator signs with the endpoint's private key (whsk_), prints only the public key (whpk_), and a
 * real Nest app verifying with `standardWebhooksEd25519({ publicKeys: <printed key> })` runs its handler.
 */

@Injectable()
class Fulfilment {
  readonly paid: string[] = [];
  @OnPaymentEvent('payment_intent.succeeded')
  onPaid(event: PaymentEvent<'payment_intent.succeeded'>) {
    this.paid.push(event.id);
  }
}

/** A Nest app on `port` whose receiver holds only the public key. */
async function appVerifyingWith(publicKey: string, baseUrl: string, apiKey: string, port: number) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      PaymentsModule.forRoot({
        apiKey,
        environment: 'sandbox',
        baseUrl,
        allowInsecureHttp: true,
        webhooks: { verifier: standardWebhooksEd25519({ publicKeys: publicKey }) },
      }),
    ],
    providers: [Fulfilment],
  }).compile();
  const app = moduleRef.createNestApplication({ rawBody: true, logger: false });
  await app.listen(port, '127.0.0.1');
  return app;
}

function options(...args: string[]): SimulatorCliOptions {
  const request = parseCliArguments(['simulator', ...args]);
  if (request.help) throw new Error('parsed as --help');
  return request.options;
}

describe('npx nestjs-payments simulator --scheme standard-webhooks-ed25519', () => {
  describe('as a process, with --secret whsk_...: a Nest app configured with the printed public key', () => {
    const key = ed25519KeyPair();
    let tree: TranspiledTree;
    let sim: CliProcess;
    let app: INestApplication;

    beforeAll(async () => {
      tree = transpileToCache('payments-cli-ed25519', ['lib']);
      const port = await freePort();
      sim = new CliProcess(join(tree.dir, 'lib', 'testing', 'simulator', 'cli', 'main.js'), [
        'simulator',
        '--port',
        '0',
        '--scheme',
        'standard-webhooks-ed25519',
        '--forward-to',
        `http://127.0.0.1:${port}/payments/webhooks`,
        '--secret',
        key.whsk,
        '--retry-schedule',
        '50,100',
      ]);
      await sim.waitFor(/^Ready\./m);
      const publicKey = printed(sim.stdout, 'public key');
      app = await appVerifyingWith(publicKey, printed(sim.stdout, 'base URL'), printed(sim.stdout, 'API key'), port);
    }, 60_000);
    afterAll(async () => {
      sim?.kill();
      await app?.close();
      tree?.remove();
    });

    it("prints the private key's public half for the app, says the private key is in use, and no endpoint secret", () => {
      expect(printed(sim.stdout, 'public key')).toBe(key.whpk);
      expect(sim.stdout).toContain('(standard-webhooks-ed25519, endpoint ');
      expect(sim.stdout).toMatch(/^ {2}private key {6}yours \(--secret\), in use \(never printed\)$/m);
      expect(sim.stdout).toContain(`PAYMENTS_WEBHOOK_PUBLIC_KEY=${key.whpk}\n`);
      expect(sim.stdout).not.toMatch(/endpoint secret|PAYMENTS_WEBHOOK_SECRET/);
    });

    it('`pay`: the v1a-signed delivery is verified with the public key alone, answered 200, the handler runs once', async () => {
      const from = sim.stdout.length;
      sim.send('pay 1500');
      await sim.waitFor(/<-- \[200\] payment_intent\.succeeded {2}delivery \S+ {2}attempt 1/, from);
      expect(app.get(Fulfilment).paid).toHaveLength(1);
    });

    it('`quit`: exit 0, and nothing it wrote, start-up lines included, carries the private key', async () => {
      sim.send('deliveries');
      sim.send('quit');
      expect(await sim.exited).toEqual({ code: 0, signal: null });
      expect(sim.stdout).toMatch(/simulator stopped\n$/);
      expect(sim.stderr).toBe('');
      for (const text of [sim.stdout, sim.stderr]) {
        expect(text).not.toContain(key.whsk.slice(5));
        expect(text).not.toContain(Buffer.from(key.whsk.slice(5), 'base64').toString('base64url'));
        expect(text).not.toContain('whsk_');
      }
    });
  });

  describe('in process, with a fresh private key', () => {
    let session: SimulatorSession | undefined;
    let app: INestApplication | undefined;
    afterEach(async () => {
      await session?.stop();
      await app?.close();
      session = app = undefined;
    });

    it('the start-up lines give the public key of the fresh whsk_ key, never the key; a Nest app verifying with it runs the handler', async () => {
      const port = await freePort();
      session = new SimulatorSession(
        options(
          '--port',
          '0',
          '--scheme',
          'standard-webhooks-ed25519',
          '--forward-to',
          `http://127.0.0.1:${port}/payments/webhooks`,
        ),
      );
      await session.start();
      const privateKey = session.endpoint!.secret;
      expect(privateKey).toMatch(/^whsk_/);
      const lines = startupLines(session).join('\n');
      expect(lines).not.toContain(privateKey.slice(5));
      expect(lines).toContain('private key      a fresh one, held by this process only (never printed');
      const publicKey = printed(lines, 'public key');
      expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);

      app = await appVerifyingWith(publicKey, session.baseUrl, session.apiKey, port);
      const intent = await session.createIntent(2500);
      expect(await session.confirm(intent, 'succeeded')).toMatchObject({ state: 'succeeded' });
      await session.simulator.waitForIdle();
      expect(app.get(Fulfilment).paid).toHaveLength(1);
      const [request] = session.simulator.webhookRequests().filter((r) => r.event === 'payment_intent.succeeded');
      expect(request!.attempts.map((attempt) => attempt.status_code)).toEqual([200]);
    }, 30_000);

    it('a malformed whsk_ --secret exits 2 naming --secret and the fix, quoting nothing', async () => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runSimulatorCli(
        [
          'simulator',
          '--port',
          '0',
          '--scheme',
          'standard-webhooks-ed25519',
          '--forward-to',
          'http://127.0.0.1:9/payments/webhooks',
          '--secret',
          'whsk_%%%top',
        ],
        {
          stdin: new PassThrough(),
          out: (line) => out.push(line),
          err: (line) => err.push(line),
          onSignal: () => () => {},
        },
      );
      expect(code).toBe(2);
      expect(out).toEqual([]);
      expect(err).toEqual([
        'nestjs-payments: --secret is not an Ed25519 private key: pass whsk_ followed by the base64 of its 32-byte seed (or leave it out to get a fresh one)',
      ]);
    });
  });
});
