import { PAYMENT_EVENT_TYPES, type PaymentEventType } from '../../../webhooks/contracts/payment-event.types.js';
import { PAYMENT_OUTCOMES } from '../checkout-page.html.js';
import type { DeliveryOrder } from '../simulator-controls.js';
import { MAX_TIMER_MS } from '../simulator-timers.js';
import { CLI_COMMANDS_HELP, CLI_REPLIES } from './cli.messages.js';
import { deliveryTable } from './delivery-log.js';
import type { SimulatorSession } from './simulator-session.js';

/** What a command line did: text to print, and whether the user asked to stop. */
export interface CommandResult {
  output: string;
  quit?: boolean;
}

/** One line command: its usage (as `help` shows it), how many words may follow it, and what it does. */
interface Command {
  usage: string;
  maxArgs: number;
  run(args: string[], session: SimulatorSession): CommandResult | Promise<CommandResult>;
}

const ORDERS: readonly DeliveryOrder[] = ['fifo', 'reverse', 'shuffle'];
const ORDER_REPLY: Record<DeliveryOrder, string> = {
  fifo: 'in order',
  reverse: 'last first',
  shuffle: 'in a random order',
};

const EXAMPLES = {
  pay: 'e.g. pay 1500 succeeded',
  checkout: 'e.g. checkout 1500',
  trigger: 'e.g. trigger payment_intent.succeeded <intent id>',
  late: 'e.g. late payment_intent.requires_capture <intent id>',
  drop: 'e.g. drop 1 (drop 0 turns it off)',
  delay: 'e.g. delay 5000 1 (delay 0 turns it off)',
  duplicate: 'e.g. duplicate 2 (duplicate 1 turns it off)',
  resend: '(the ids are in `deliveries`)',
} as const;

const count = (text: string | undefined): number | undefined =>
  text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;

const isEventType = (type: string | undefined): type is PaymentEventType =>
  type !== undefined && (PAYMENT_EVENT_TYPES as readonly string[]).includes(type);

const usageOf = (name: keyof typeof EXAMPLES): string => `usage: ${COMMANDS[name]!.usage}, ${EXAMPLES[name]}`;

const quit: Command = { usage: 'quit', maxArgs: 0, run: () => ({ output: 'stopping', quit: true }) };

const COMMANDS: Record<string, Command> = {
  help: { usage: 'help', maxArgs: 0, run: () => ({ output: CLI_COMMANDS_HELP }) },
  quit,
  exit: { ...quit, usage: 'exit' },

  pay: {
    usage: 'pay [amount] [outcome]',
    maxArgs: 2,
    async run([amountText, outcome = 'succeeded'], session) {
      const amount = amountText === undefined ? 1500 : count(amountText);
      // `pay declined` is an outcome in the amount's place: the usage names the outcomes too.
      if (amount === undefined) return { output: `${usageOf('pay')}\n  outcomes: ${PAYMENT_OUTCOMES.join(', ')}` };
      // Checked before the intent is made: a refused outcome leaves nothing behind.
      if (!(PAYMENT_OUTCOMES as readonly string[]).includes(outcome))
        return { output: `unknown outcome '${outcome}': pay takes ${PAYMENT_OUTCOMES.join(', ')}` };
      const intent = await session.createIntent(amount);
      const confirmed = await session.confirm(intent, outcome);
      return { output: `payment intent ${intent.id} (amount ${amount}) confirmed: ${confirmed.state}` };
    },
  },

  checkout: {
    usage: 'checkout [amount]',
    maxArgs: 1,
    async run([amountText], session) {
      const amount = amountText === undefined ? 1500 : count(amountText);
      if (amount === undefined) return { output: usageOf('checkout') };
      const intent = await session.createIntent(amount);
      return { output: `payment intent ${intent.id}: open ${session.checkoutUrl(intent)}` };
    },
  },

  trigger: {
    usage: 'trigger <event> [intent-id]',
    maxArgs: 2,
    run([type, intentId], session) {
      if (!isEventType(type)) return { output: `${usageOf('trigger')}\n  events: ${PAYMENT_EVENT_TYPES.join(', ')}` };
      const event = session.simulator.emit(type, intentId, { apiKey: session.apiKey });
      return { output: `emitted ${type} (event ${event.id})` };
    },
  },

  late: {
    usage: 'late <event> <intent-id>',
    maxArgs: 2,
    run([type, intentId], session) {
      if (!isEventType(type) || intentId === undefined)
        return { output: `${usageOf('late')}\n  events: ${PAYMENT_EVENT_TYPES.join(', ')}` };
      const event = session.simulator.emit(type, intentId, { apiKey: session.apiKey, late: true });
      const state = session.simulator.intent(intentId)?.state;
      return { output: `emitted ${type} late (event ${event.id}): intent ${intentId} stays ${state}` };
    },
  },

  drop: {
    usage: 'drop <n>',
    maxArgs: 1,
    run([nText], session) {
      const n = count(nText);
      if (n === undefined) return { output: usageOf('drop') };
      session.simulator.controls.dropDeliveries({ next: n });
      return { output: n === 0 ? 'dropping off' : `dropping the next ${n} delivery(ies)` };
    },
  },

  delay: {
    usage: 'delay <ms> [n]',
    maxArgs: 2,
    run([msText, nText], session) {
      const ms = count(msText);
      const n = nText === undefined ? undefined : count(nText);
      if (ms === undefined || (nText !== undefined && n === undefined)) return { output: usageOf('delay') };
      // Node clamps a longer timer to 1 ms: the delivery would go at once instead of never.
      if (ms > MAX_TIMER_MS) return { output: `${CLI_REPLIES.delayTooLong}\n${usageOf('delay')}` };
      session.simulator.controls.delayDeliveries(ms, { next: n });
      if (ms === 0) return { output: 'delay off' };
      return {
        output: `delaying ${n === undefined ? 'every new delivery' : `the next ${n} delivery(ies)`} by ${ms} ms`,
      };
    },
  },

  hold: {
    usage: 'hold',
    maxArgs: 0,
    run: (_args, session) => {
      session.simulator.controls.hold();
      return { output: 'holding new deliveries (`release` sends them, `release reverse` last first)' };
    },
  },

  release: {
    usage: 'release [order]',
    maxArgs: 1,
    run: ([order = 'fifo'], session) => {
      if (!(ORDERS as readonly string[]).includes(order))
        return { output: `unknown order '${order}': release takes fifo (default), reverse or shuffle` };
      // Counted before the release: what was held is what goes out, in that order.
      const held = session.simulator.webhookRequests().filter((r) => r.status === 'held').length;
      session.simulator.controls.release(order as DeliveryOrder);
      if (held === 0) return { output: 'nothing was held: new deliveries go out at once again' };
      return { output: `released ${held} held delivery(ies), ${ORDER_REPLY[order as DeliveryOrder]}` };
    },
  },

  'out-of-order': {
    usage: 'out-of-order <order>',
    maxArgs: 1,
    run: ([order], session) => {
      if (order === undefined) return { output: 'usage: out-of-order <order>: fifo, reverse, shuffle or off' };
      if (order === 'off') {
        session.simulator.controls.outOfOrder(false);
        return { output: 'out-of-order off: the events of a payment go out together' };
      }
      if (!(ORDERS as readonly string[]).includes(order))
        return { output: `unknown order '${order}': out-of-order takes fifo, reverse, shuffle or off` };
      session.simulator.controls.outOfOrder(order as DeliveryOrder);
      return {
        output: `delivering the events of each payment one after the other, ${ORDER_REPLY[order as DeliveryOrder]}`,
      };
    },
  },

  duplicate: {
    usage: 'duplicate <copies>',
    maxArgs: 1,
    run([copiesText], session) {
      const copies = count(copiesText);
      if (copies === undefined || copies < 1) return { output: usageOf('duplicate') };
      session.simulator.controls.duplicateDeliveries(copies);
      return { output: copies === 1 ? 'duplicates off' : `sending every delivery ${copies} times` };
    },
  },

  resend: {
    usage: 'resend <delivery-id>',
    maxArgs: 1,
    async run([id], session) {
      if (id === undefined) return { output: usageOf('resend') };
      await session.resend(id);
      return { output: `resending ${id}` };
    },
  },

  deliveries: {
    usage: 'deliveries',
    maxArgs: 0,
    run: (_args, session) => ({
      output: deliveryTable(session.simulator.webhookRequests(), session.simulator.controls.dropped),
    }),
  },

  events: {
    usage: 'events',
    maxArgs: 0,
    run: (_args, session) => ({
      output:
        session.simulator
          .events()
          .map((e) => `  ${e.id}  ${e.event}`)
          .join('\n') || '  no events yet',
    }),
  },

  reset: {
    usage: 'reset',
    maxArgs: 0,
    run: (_args, session) => {
      session.simulator.controls.reset();
      return { output: 'every control off' };
    },
  },
};

/**
 * Runs one line typed in the terminal. A refused command (unknown, extra words, bad arguments, an
 * answer of the simulator such as 409 on a resend in flight) prints a line and the simulator keeps
 * running; nothing typed is ignored silently.
 */
export async function runCommandLine(line: string, session: SimulatorSession): Promise<CommandResult> {
  const [name, ...args] = line.trim().split(/\s+/);
  if (name === undefined || name === '') return { output: '' };
  const key = name.toLowerCase();
  const command = Object.hasOwn(COMMANDS, key) ? COMMANDS[key] : undefined;
  if (command === undefined) return { output: `unknown command '${name}': type \`help\` for the list` };
  if (args.length > command.maxArgs) {
    const allowed =
      command.maxArgs === 0 ? 'no arguments' : `at most ${command.maxArgs} argument${command.maxArgs > 1 ? 's' : ''}`;
    return { output: `${key} takes ${allowed}: usage: ${command.usage}` };
  }
  try {
    return await command.run(args, session);
  } catch (error) {
    return { output: `${name} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}
