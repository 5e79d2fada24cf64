import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PAYMENT_INTENT_STATES } from '../../../../../lib/client/payments-intent.states.js';
import { CLI_COMMANDS_HELP } from '../../../../../lib/testing/simulator/cli/cli.messages.js';
import { parseCliArguments } from '../../../../../lib/testing/simulator/cli/cli-options.js';
import { runCommandLine } from '../../../../../lib/testing/simulator/cli/cli-commands.js';
import { SimulatorSession } from '../../../../../lib/testing/simulator/cli/simulator-session.js';
import { apiClient, WebhookReceiver } from '../webhook-receiver.fixture.js';

/*
 * The line commands of `npx nestjs-payments simulator` as a user types them, run by the CLI's own
 * session (the real simulator, forwarding to a receiving HTTP server): reordering (`release reverse`,
 * `out-of-order`), late events (`late`), and refusals of what the CLI does not understand (extra words,
 * unknown outcomes or orders), which used to be ignored silently. simulator-cli-controls.spec.ts runs
 * the same as a process.
 */
let session: SimulatorSession;
let receiver: WebhookReceiver;

beforeEach(async () => {
  receiver = new WebhookReceiver();
  const url = await receiver.start();
  const request = parseCliArguments(['simulator', '--port', '0', '--forward-to', url, '--retry-schedule', '50']);
  if (request.help) throw new Error('parsed as --help');
  session = new SimulatorSession(request.options);
  await session.start();
});
afterEach(async () => {
  await session.stop();
  await receiver.stop();
});

const type = async (line: string): Promise<string> => (await runCommandLine(line, session)).output;
/** The intent id of the event `type` printed after `emitted`. */
const emittedIntent = (eventId: string): string => {
  const event = session.simulator.events().find((e) => e.id === eventId)!;
  return (event.data as { payment_intent: { id: string } }).payment_intent.id;
};
const eventIdOf = (output: string): string => /\(event (\S+)\)/.exec(output)![1]!;
const received = () => receiver.deliveries.map((d) => d.body.event);

describe('reordering deliveries', () => {
  it('`hold`, two events, `release reverse`: the receiver gets the second first, one after the other', async () => {
    expect(await type('hold')).toMatch(/^holding new deliveries/);
    const first = eventIdOf(await type('trigger payment_intent.requires_capture'));
    const second = eventIdOf(await type('trigger payment_intent.cancelled'));
    expect(await type('release reverse')).toBe('released 2 held delivery(ies), last first');
    await receiver.waitFor(2);
    expect(receiver.deliveries.map((d) => d.body.id)).toEqual([second, first]);
  });

  it('plain `release` still sends the backlog in order', async () => {
    await type('hold');
    const first = eventIdOf(await type('trigger payment_intent.requires_capture'));
    const second = eventIdOf(await type('trigger payment_intent.cancelled'));
    expect(await type('release')).toBe('released 2 held delivery(ies), in order');
    await receiver.waitFor(2);
    expect(receiver.deliveries.map((d) => d.body.id)).toEqual([first, second]);
  });

  it('`release backwards` is refused naming the orders, and the deliveries stay held', async () => {
    await type('hold');
    await type('trigger payment_intent.cancelled');
    const output = await type('release backwards');
    expect(output).toBe("unknown order 'backwards': release takes fifo (default), reverse or shuffle");
    expect(session.simulator.controls.holding).toBe(true);
    expect(session.simulator.webhookRequests().map((r) => r.status)).toEqual(['held']);
  });

  it('`out-of-order reverse`: the events of one payment arrive last first; `out-of-order off` ends it', async () => {
    expect(await type('out-of-order reverse')).toBe(
      'delivering the events of each payment one after the other, last first',
    );
    await type('pay 1500');
    await receiver.waitFor(2);
    expect(received()).toEqual(['charge.succeeded', 'payment_intent.succeeded']);
    expect(session.simulator.controls.batchOrder).toBe('reverse');
    expect(await type('out-of-order off')).toBe('out-of-order off: the events of a payment go out together');
    expect(session.simulator.controls.batchOrder).toBeUndefined();
  });

  it('`out-of-order` without an order, or with an unknown one, is refused naming the orders', async () => {
    expect(await type('out-of-order')).toBe('usage: out-of-order <order>: fifo, reverse, shuffle or off');
    expect(await type('out-of-order sideways')).toBe(
      "unknown order 'sideways': out-of-order takes fifo, reverse, shuffle or off",
    );
    expect(session.simulator.controls.batchOrder).toBeUndefined();
  });
});

describe('what the CLI does not understand is refused, never ignored', () => {
  it.each([
    ['hold now', 'hold takes no arguments: usage: hold'],
    ['release reverse now', 'release takes at most 1 argument: usage: release [order]'],
    ['deliveries all', 'deliveries takes no arguments: usage: deliveries'],
    ['reset everything', 'reset takes no arguments: usage: reset'],
    ['pay 1500 succeeded twice', 'pay takes at most 2 arguments: usage: pay [amount] [outcome]'],
    ['drop 1 2', 'drop takes at most 1 argument: usage: drop <n>'],
    ['quit now', 'quit takes no arguments: usage: quit'],
  ])('`%s` is refused naming the usage, and does nothing', async (line, reply) => {
    const result = await runCommandLine(line, session);
    expect(result).toEqual({ output: reply });
    expect(session.simulator.controls.holding).toBe(false);
    expect(session.simulator.controls.dropped).toBe(0);
    expect(session.simulator.events()).toEqual([]);
  });

  it('`pay 1500 declined` is refused naming every outcome pay accepts, and creates no intent', async () => {
    const output = await type('pay 1500 declined');
    expect(output).toBe(`unknown outcome 'declined': pay takes ${PAYMENT_INTENT_STATES.join(', ')}`);
    expect(session.simulator.requestCounts().byRoute['POST /payment_intents']).toBeUndefined();
  });

  it('every outcome `pay` accepts is confirmed as that state', async () => {
    for (const outcome of PAYMENT_INTENT_STATES) {
      expect(await type(`pay 100 ${outcome}`)).toMatch(new RegExp(`confirmed: ${outcome}$`));
    }
  });

  it('`help` lists only outcomes that `pay` accepts, and every one of them', () => {
    const listed = /with the outcome \(default succeeded\): (.*?) checkout \[amount\]/.exec(
      CLI_COMMANDS_HELP.replace(/\s+/g, ' '),
    )![1]!;
    expect(listed.split(', ').sort()).toEqual([...PAYMENT_INTENT_STATES].sort());
    expect(CLI_COMMANDS_HELP).not.toContain('declined');
  });

  it('`help` names the reordering and late-event commands', () => {
    for (const usage of ['release [order]', 'out-of-order <order>', 'late <event> <intent-id>']) {
      expect(CLI_COMMANDS_HELP).toContain(usage);
    }
  });
});

describe('late and real events for a paid intent (the current-state scenarios)', () => {
  const retrieve = (id: string) => apiClient(session.baseUrl, session.apiKey)('GET', `/payment_intents/${id}`);

  it('`late payment_intent.requires_capture <id>` after it succeeded: delivered after, the intent stays succeeded', async () => {
    await type('pay 1500 requires_capture');
    const intentId = emittedIntent(session.simulator.events()[0]!.id);
    const succeeded = eventIdOf(await type(`trigger payment_intent.succeeded ${intentId}`));
    await receiver.waitFor(3);
    const late = await type(`late payment_intent.requires_capture ${intentId}`);
    expect(late).toMatch(/^emitted payment_intent\.requires_capture late \(event \S+\): intent \S+ stays succeeded$/);
    await receiver.waitFor(4);
    const [before, after] = [receiver.deliveries[2]!, receiver.deliveries[3]!];
    expect(before.body).toMatchObject({ id: succeeded, event: 'payment_intent.succeeded' });
    expect(after.body).toMatchObject({
      id: eventIdOf(late),
      event: 'payment_intent.requires_capture',
      data: { payment_intent: { id: intentId, state: 'requires_capture' } },
    });
    expect((await retrieve(intentId)).body).toMatchObject({ id: intentId, state: 'succeeded' });
  });

  it('`trigger payment_intent.errored_capture <id>` after it succeeded: the intent really moves to errored_capture', async () => {
    await type('pay 1500');
    const intentId = emittedIntent(session.simulator.events()[0]!.id);
    await receiver.waitFor(2);
    await type(`trigger payment_intent.errored_capture ${intentId}`);
    await receiver.waitFor(3);
    expect(receiver.deliveries[2]!.body).toMatchObject({
      event: 'payment_intent.errored_capture',
      data: { payment_intent: { id: intentId, state: 'errored_capture' } },
    });
    expect((await retrieve(intentId)).body).toMatchObject({ state: 'errored_capture' });
  });

  it('`late` needs an event and an existing intent', async () => {
    expect(await type('late payment_intent.requires_capture')).toMatch(/^usage: late <event> <intent-id>/);
    expect(await type('late payment_intent.nope 00000000-0000-4000-8000-000000000000')).toMatch(
      /^usage: late <event> <intent-id>/,
    );
    expect(await type('late payment_intent.requires_capture 00000000-0000-4000-8000-000000000000')).toMatch(
      /^late failed: .*intentId.* names no payment_intent of this simulator/,
    );
  });
});
