import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { hmacVerifier } from '../../../../../lib/index.js';
import { transpileToCache, type TranspiledTree } from '../../../../fixtures/transpile.fixture.js';
import { apiClient, WebhookReceiver } from '../webhook-receiver.fixture.js';
import { CliProcess, printed } from './cli-process.fixture.js';

/*
 * The rest of `npx nestjs-payments simulator`'s surface, as a process: the HMAC scheme flags (a
 * delivery verified with the printed secret), the checkout page it serves, and the delay, hold,
 * duplicate and reset controls typed on stdin.
 */
describe('npx nestjs-payments simulator: scheme flags, checkout page, delivery controls', () => {
  let tree: TranspiledTree;
  let main: string;
  let receiver: WebhookReceiver;
  let url: string;
  let cli: CliProcess | undefined;

  beforeAll(async () => {
    tree = transpileToCache('payments-cli-controls', ['lib']);
    main = join(tree.dir, 'lib', 'testing', 'simulator', 'cli', 'main.js');
  });
  afterAll(() => tree?.remove());
  afterEach(async () => {
    cli?.kill();
    await receiver?.stop();
  });
  const boot = async (...flags: string[]): Promise<CliProcess> => {
    receiver = new WebhookReceiver();
    url = await receiver.start();
    cli = new CliProcess(main, ['simulator', '--port', '0', '--forward-to', url, ...flags]);
    await cli.waitFor(/^Ready\./m);
    return cli;
  };

  it('--scheme hmac --hmac-header x-signature --hmac-prefix sha256=: deliveries verify with the printed secret', async () => {
    const sim = await boot('--scheme', 'hmac', '--hmac-header', 'x-signature', '--hmac-prefix', 'sha256=');
    expect(sim.stdout).toContain('(hmac, endpoint ');
    sim.send('pay');
    await receiver.waitFor(1);
    const [delivery] = receiver.deliveries;
    expect(String(delivery!.headers['x-signature'])).toMatch(/^sha256=[0-9a-f]{64}$/);
    const verifier = hmacVerifier({
      secrets: printed(sim.stdout, 'endpoint secret'),
      header: 'x-signature',
      prefix: 'sha256=',
    });
    const verdict = await verifier.verify({
      rawBody: Buffer.from(delivery!.rawBody),
      headers: delivery!.headers as Record<string, string>,
    });
    expect(verdict).toMatchObject({ valid: true });
  });

  it('--hmac-header without --scheme hmac is refused, naming both flags', async () => {
    const child = new CliProcess(main, ['simulator', '--hmac-header', 'x-signature']);
    expect(await child.exited).toEqual({ code: 2, signal: null });
    expect(child.stderr).toBe(
      'nestjs-payments: --hmac-header applies to --scheme hmac only: add --scheme hmac or drop --hmac-header\n',
    );
  });

  it('`checkout` prints a page the simulator serves: the checkout form of that intent', async () => {
    const sim = await boot();
    sim.send('checkout 2500');
    const [, page] = await sim.waitFor(/: open (http:\/\/\S+)/);
    const res = await fetch(page!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(new URL(page!).hash).toMatch(/^#embed_token=/);
  });

  it('`delay <ms> 1` holds back the next delivery only; `hold`/`release`; `duplicate 2`; `reset`', async () => {
    const sim = await boot();
    let from = sim.stdout.length;
    sim.send('delay 600000 1');
    sim.send('trigger payment_intent.cancelled');
    await sim.waitFor(/emitted payment_intent\.cancelled/, from);
    sim.send('trigger payment_intent.cancelled');
    await receiver.waitFor(1);
    from = sim.stdout.length;
    sim.send('deliveries');
    await sim.waitFor(/dropped by `drop`: 0/, from);
    expect(sim.stdout.slice(from)).toMatch(/payment_intent\.cancelled .* scheduled {2}answers: none yet, next attempt/);

    sim.send('hold');
    sim.send('trigger payment_intent.cancelled');
    from = sim.stdout.length;
    sim.send('deliveries');
    await sim.waitFor(/ held {2}answers: none yet/, from);
    expect(receiver.deliveries).toHaveLength(1);
    sim.send('release');
    await receiver.waitFor(2);

    sim.send('duplicate 2');
    sim.send('trigger payment_intent.cancelled');
    await receiver.waitFor(4);
    const [a, b] = receiver.deliveries.slice(2);
    expect(a!.body.id).toBe(b!.body.id); // two copies of one event
    from = sim.stdout.length;
    sim.send('reset');
    await sim.waitFor(/every control off/, from);
    sim.send('trigger payment_intent.cancelled');
    await receiver.waitFor(5);
    sim.send('quit');
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    expect(receiver.deliveries).toHaveLength(5);
  });

  it('`hold`, two payments, `release reverse`: the receiving server gets them last first', async () => {
    const sim = await boot();
    let from = sim.stdout.length;
    sim.send('hold');
    sim.send('trigger payment_intent.requires_capture');
    sim.send('trigger payment_intent.cancelled');
    const [, first] = await sim.waitFor(/emitted payment_intent\.requires_capture \(event (\S+)\)/, from);
    const [, second] = await sim.waitFor(/emitted payment_intent\.cancelled \(event (\S+)\)/, from);
    from = sim.stdout.length;
    sim.send('release reverse');
    await sim.waitFor(/released 2 held delivery\(ies\), last first/, from);
    await receiver.waitFor(2);
    expect(receiver.deliveries.map((d) => d.body.id)).toEqual([second, first]);
    expect(receiver.deliveries.map((d) => d.body.event)).toEqual([
      'payment_intent.cancelled',
      'payment_intent.requires_capture',
    ]);
  });

  it('`hold`, `pay`, `release reverse`; then `out-of-order fifo`: the events of a payment arrive in that order', async () => {
    const sim = await boot();
    let from = sim.stdout.length;
    sim.send('hold');
    sim.send('pay 1500');
    await sim.waitFor(/confirmed: succeeded/, from);
    from = sim.stdout.length;
    sim.send('release reverse');
    await sim.waitFor(/released 2 held delivery\(ies\), last first/, from);
    await receiver.waitFor(2);
    expect(receiver.deliveries.map((d) => d.body.event)).toEqual(['charge.succeeded', 'payment_intent.succeeded']);

    from = sim.stdout.length;
    sim.send('out-of-order fifo');
    await sim.waitFor(/one after the other, in order/, from);
    sim.send('pay 1500');
    await receiver.waitFor(4);
    expect(receiver.deliveries.slice(2).map((d) => d.body.event)).toEqual([
      'payment_intent.succeeded',
      'charge.succeeded',
    ]);
    from = sim.stdout.length;
    sim.send('release');
    await sim.waitFor(/nothing was held: new deliveries go out at once again/, from);
    sim.send('quit');
    expect(await sim.exited).toEqual({ code: 0, signal: null });
  });

  it('`pay`, then `late payment_intent.requires_capture <id>`: the stale event arrives last, the intent stays succeeded', async () => {
    const sim = await boot();
    let from = sim.stdout.length;
    sim.send('pay 1500');
    const [, intentId] = await sim.waitFor(/payment intent (\S+) \(amount 1500\) confirmed: succeeded/, from);
    await receiver.waitFor(2);
    from = sim.stdout.length;
    sim.send(`late payment_intent.requires_capture ${intentId}`);
    const [, lateId] = await sim.waitFor(
      /emitted payment_intent\.requires_capture late \(event (\S+)\): intent \S+ stays succeeded/,
      from,
    );
    await receiver.waitFor(3);
    expect(receiver.deliveries[2]!.body).toMatchObject({
      id: lateId,
      event: 'payment_intent.requires_capture',
      data: { payment_intent: { id: intentId, state: 'requires_capture' } },
    });
    const retrieve = apiClient(printed(sim.stdout, 'base URL'), printed(sim.stdout, 'API key'));
    expect((await retrieve('GET', `/payment_intents/${intentId}`)).body).toMatchObject({ state: 'succeeded' });
    sim.send('quit');
    expect(await sim.exited).toEqual({ code: 0, signal: null });
  });

  it('`out-of-order reverse`, extra words and unknown outcomes: reordered, or refused naming what is valid', async () => {
    const sim = await boot();
    let from = sim.stdout.length;
    sim.send('pay 1500 declined');
    await sim.waitFor(/unknown outcome 'declined': pay takes succeeded, /, from);
    sim.send('hold please');
    await sim.waitFor(/hold takes no arguments: usage: hold/, from);
    sim.send('out-of-order reverse');
    await sim.waitFor(/one after the other, last first/, from);
    from = sim.stdout.length;
    sim.send('pay 1500');
    await sim.waitFor(/confirmed: succeeded/, from);
    await receiver.waitFor(2);
    expect(receiver.deliveries.map((d) => d.body.event)).toEqual(['charge.succeeded', 'payment_intent.succeeded']);
    sim.send('quit');
    expect(await sim.exited).toEqual({ code: 0, signal: null });
  });
});
