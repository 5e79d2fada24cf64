import { describe, expect, it } from '@jest/globals';
import { PAYMENT_INTENT_STATES } from '../../../lib/client/payments-intent.states.js';
import { PAYMENT_OUTCOMES } from '../../../lib/testing/simulator/checkout-page.html.js';
import { CLI_COMMANDS_HELP, CLI_HELP } from '../../../lib/testing/simulator/cli/cli.messages.js';
import { runCommandLine } from '../../../lib/testing/simulator/cli/cli-commands.js';
import type { SimulatorSession } from '../../../lib/testing/simulator/cli/simulator-session.js';

/*
 * The line commands of `npx nestjs-payments simulator`, parsed and dispatched against a session that
 * only records what it is asked: which control each command calls with which arguments (mirroring
 * `simulator.controls`), the exact refusals of extra words, unknown outcomes and orders (nothing is
 * called), and what `help` offers. test/e2e/testing/simulator/cli/ runs them against the real simulator
 * and as a process.
 */

type Call = [string, ...unknown[]];

/** A session whose simulator, controls and API calls record each call; `held` requests are listed as held. */
function recordingSession(options: { held?: number; intentState?: string } = {}): {
  session: SimulatorSession;
  calls: Call[];
} {
  const calls: Call[] = [];
  const record =
    (name: string, result: unknown = undefined) =>
    (...args: unknown[]): unknown => {
      calls.push([name, ...args]);
      return result;
    };
  const controls = {
    hold: record('controls.hold'),
    release: record('controls.release'),
    outOfOrder: record('controls.outOfOrder'),
    dropDeliveries: record('controls.dropDeliveries'),
    delayDeliveries: record('controls.delayDeliveries'),
    duplicateDeliveries: record('controls.duplicateDeliveries'),
    reset: record('controls.reset'),
    dropped: 0,
  };
  const simulator = {
    controls,
    emit: (...args: unknown[]) => {
      calls.push(['simulator.emit', ...args]);
      return { id: 'evt_1' };
    },
    intent: (id: string) => (options.intentState === undefined ? undefined : { id, state: options.intentState }),
    webhookRequests: () => Array.from({ length: options.held ?? 0 }, (_, i) => ({ id: `wr_${i}`, status: 'held' })),
    events: () => [],
  };
  const session = {
    simulator,
    apiKey: 'sk_test_recording',
    createIntent: async (amount: number) => {
      calls.push(['session.createIntent', amount]);
      return { id: 'pi_1', state: 'requires_payment_method', embed_token: 'e', render_token: 'r' };
    },
    confirm: async (_intent: unknown, outcome: string) => {
      calls.push(['session.confirm', outcome]);
      return { state: outcome };
    },
    checkoutUrl: () => 'http://127.0.0.1:4010/embed/checkout',
    resend: record('session.resend', Promise.resolve({})),
  };
  return { session: session as unknown as SimulatorSession, calls };
}

async function run(line: string, options?: { held?: number; intentState?: string }) {
  const { session, calls } = recordingSession(options);
  const result = await runCommandLine(line, session);
  return { output: result.output, quit: result.quit, calls };
}

/** Every command `help` names (`hold | release [order]` names two). */
const helpCommands = (): string[] =>
  [...CLI_COMMANDS_HELP.matchAll(/^ {2}([\w-]+)(?: [^|\n]*?\| ([\w-]+))?/gm)].flatMap((m) =>
    m[2] === undefined ? [m[1]!] : [m[1]!, m[2]],
  );

describe('simulator CLI commands: reordering mirrors simulator.controls', () => {
  it.each([
    ['hold', ['controls.hold']],
    ['release', ['controls.release', 'fifo']],
    ['release fifo', ['controls.release', 'fifo']],
    ['release reverse', ['controls.release', 'reverse']],
    ['release shuffle', ['controls.release', 'shuffle']],
    ['out-of-order fifo', ['controls.outOfOrder', 'fifo']],
    ['out-of-order reverse', ['controls.outOfOrder', 'reverse']],
    ['out-of-order shuffle', ['controls.outOfOrder', 'shuffle']],
    ['out-of-order off', ['controls.outOfOrder', false]],
  ])('`%s` calls %j', async (line, call) => {
    expect((await run(line, { held: 2 })).calls).toEqual([call]);
  });

  it('`release reverse` says how many held deliveries go out, and in which order', async () => {
    expect((await run('release reverse', { held: 3 })).output).toBe('released 3 held delivery(ies), last first');
    expect((await run('release', { held: 1 })).output).toBe('released 1 held delivery(ies), in order');
    expect((await run('release shuffle', { held: 2 })).output).toBe('released 2 held delivery(ies), in a random order');
  });

  it('`release` with nothing held says so (and still stops holding)', async () => {
    const { output, calls } = await run('release reverse');
    expect(output).toBe('nothing was held: new deliveries go out at once again');
    expect(calls).toEqual([['controls.release', 'reverse']]);
  });

  it('`out-of-order <order>` and `out-of-order off` reply what they turned on or off', async () => {
    expect((await run('out-of-order reverse')).output).toBe(
      'delivering the events of each payment one after the other, last first',
    );
    expect((await run('out-of-order off')).output).toBe('out-of-order off: the events of a payment go out together');
  });

  it('`late <event> <intent-id>` emits a late event of that intent and names the state it stays in', async () => {
    const { output, calls } = await run('late payment_intent.requires_capture pi_1', { intentState: 'succeeded' });
    expect(calls).toEqual([
      ['simulator.emit', 'payment_intent.requires_capture', 'pi_1', { apiKey: 'sk_test_recording', late: true }],
    ]);
    expect(output).toBe('emitted payment_intent.requires_capture late (event evt_1): intent pi_1 stays succeeded');
  });

  it('`trigger <event> <intent-id>` emits a real move of that intent (not late)', async () => {
    const { calls } = await run('trigger payment_intent.errored_capture pi_1');
    expect(calls).toEqual([
      ['simulator.emit', 'payment_intent.errored_capture', 'pi_1', { apiKey: 'sk_test_recording' }],
    ]);
  });
});

describe('simulator CLI commands: what is not understood is refused, and nothing runs', () => {
  it.each([
    ['help me', 'help takes no arguments: usage: help'],
    ['quit now', 'quit takes no arguments: usage: quit'],
    ['exit now', 'exit takes no arguments: usage: exit'],
    ['pay 1500 succeeded twice', 'pay takes at most 2 arguments: usage: pay [amount] [outcome]'],
    ['checkout 1500 now', 'checkout takes at most 1 argument: usage: checkout [amount]'],
    [
      'trigger payment_intent.succeeded pi_1 pi_2',
      'trigger takes at most 2 arguments: usage: trigger <event> [intent-id]',
    ],
    [
      'late payment_intent.requires_capture pi_1 now',
      'late takes at most 2 arguments: usage: late <event> <intent-id>',
    ],
    ['drop 1 2', 'drop takes at most 1 argument: usage: drop <n>'],
    ['delay 10 1 2', 'delay takes at most 2 arguments: usage: delay <ms> [n]'],
    ['hold now', 'hold takes no arguments: usage: hold'],
    ['release reverse now', 'release takes at most 1 argument: usage: release [order]'],
    ['out-of-order reverse now', 'out-of-order takes at most 1 argument: usage: out-of-order <order>'],
    ['duplicate 2 3', 'duplicate takes at most 1 argument: usage: duplicate <copies>'],
    ['resend wr_1 wr_2', 'resend takes at most 1 argument: usage: resend <delivery-id>'],
    ['deliveries all', 'deliveries takes no arguments: usage: deliveries'],
    ['events all', 'events takes no arguments: usage: events'],
    ['reset everything', 'reset takes no arguments: usage: reset'],
  ])('`%s` is refused: %s', async (line, reply) => {
    expect(await run(line, { held: 1 })).toEqual({ output: reply, quit: undefined, calls: [] });
  });

  it('every command `help` names refuses extra words (none is missing from the cases above)', async () => {
    for (const name of helpCommands()) {
      const { output, calls } = await run(`${name} a b c d`);
      expect(output).toMatch(new RegExp(`^${name} takes (no arguments|at most \\d arguments?): usage: ${name}\\b`));
      expect(calls).toEqual([]);
    }
  });

  it('`pay` with an unknown outcome names every outcome it accepts, before any intent is made', async () => {
    for (const outcome of ['declined', 'x', 'Succeeded']) {
      expect(await run(`pay 1500 ${outcome}`)).toEqual({
        output: `unknown outcome '${outcome}': pay takes ${PAYMENT_INTENT_STATES.join(', ')}`,
        quit: undefined,
        calls: [],
      });
    }
  });

  it('`pay <outcome>` without an amount is refused with the usage and every outcome pay accepts', async () => {
    for (const line of ['pay declined', 'pay succeeded', 'pay -5 succeeded']) {
      expect(await run(line)).toEqual({
        output: `usage: pay [amount] [outcome], e.g. pay 1500 succeeded\n  outcomes: ${PAYMENT_INTENT_STATES.join(', ')}`,
        quit: undefined,
        calls: [],
      });
    }
  });

  it('`pay` with an outcome it accepts makes the intent and confirms it with that outcome', async () => {
    const { output, calls } = await run('pay 1500 requires_capture');
    expect(calls).toEqual([
      ['session.createIntent', 1500],
      ['session.confirm', 'requires_capture'],
    ]);
    expect(output).toBe('payment intent pi_1 (amount 1500) confirmed: requires_capture');
  });

  it('`release` and `out-of-order` with an unknown order name the orders; the held deliveries stay held', async () => {
    expect(await run('release backwards', { held: 2 })).toEqual({
      output: "unknown order 'backwards': release takes fifo (default), reverse or shuffle",
      quit: undefined,
      calls: [],
    });
    expect(await run('out-of-order sideways')).toEqual({
      output: "unknown order 'sideways': out-of-order takes fifo, reverse, shuffle or off",
      quit: undefined,
      calls: [],
    });
    expect(await run('out-of-order')).toEqual({
      output: 'usage: out-of-order <order>: fifo, reverse, shuffle or off',
      quit: undefined,
      calls: [],
    });
  });

  it('`late` needs a known event and an intent id', async () => {
    for (const line of ['late', 'late payment_intent.requires_capture', 'late payment_intent.nope pi_1']) {
      const { output, calls } = await run(line);
      expect(output).toMatch(
        /^usage: late <event> <intent-id>, e\.g\. late payment_intent\.requires_capture <intent id>\n {2}events: /,
      );
      expect(calls).toEqual([]);
    }
  });

  it('an unknown command points to `help`; a blank line does nothing', async () => {
    expect((await run('declined')).output).toBe("unknown command 'declined': type `help` for the list");
    expect((await run('outoforder reverse')).output).toBe("unknown command 'outoforder': type `help` for the list");
    expect(await run('   ')).toEqual({ output: '', quit: undefined, calls: [] });
  });

  it('command names are not case-sensitive; their words are', async () => {
    expect((await run('RELEASE reverse', { held: 1 })).calls).toEqual([['controls.release', 'reverse']]);
    expect((await run('release REVERSE', { held: 1 })).calls).toEqual([]);
  });
});

describe('simulator CLI `help`', () => {
  const outcomesListed = (): string[] =>
    /with the outcome \(default succeeded\): (.*?) checkout \[amount\]/
      .exec(CLI_COMMANDS_HELP.replace(/\s+/g, ' '))![1]!
      .split(', ');

  it('lists exactly the outcomes `pay` (the checkout confirm) accepts, in their order, and no `declined`', () => {
    expect(outcomesListed()).toEqual([...PAYMENT_OUTCOMES]);
    expect([...PAYMENT_OUTCOMES]).toEqual([...PAYMENT_INTENT_STATES]);
    expect(CLI_COMMANDS_HELP).not.toMatch(/declined/);
  });

  it('is what the `help` command prints, and what --help shows under "Commands"', async () => {
    expect(await run('help')).toEqual({ output: CLI_COMMANDS_HELP, quit: undefined, calls: [] });
    expect(CLI_HELP).toContain(`Commands (type them while it runs):\n${CLI_COMMANDS_HELP}\n`);
  });

  it('names every command the CLI runs, with the reordering and late-event ones', async () => {
    expect(helpCommands()).toEqual([
      'pay',
      'checkout',
      'trigger',
      'late',
      'drop',
      'delay',
      'hold',
      'release',
      'out-of-order',
      'duplicate',
      'resend',
      'deliveries',
      'events',
      'reset',
      'help',
      'quit',
    ]);
    for (const usage of ['release [order]', 'out-of-order <order>', 'late <event> <intent-id>']) {
      expect(CLI_COMMANDS_HELP).toContain(usage);
    }
    expect(CLI_COMMANDS_HELP).toMatch(/order: fifo \(default\), reverse, shuffle/);
    expect(CLI_COMMANDS_HELP).toMatch(/fifo, reverse, shuffle; off: together again/);
  });
});
