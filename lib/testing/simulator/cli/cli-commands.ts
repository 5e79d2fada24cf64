import { PAYMENT_EVENT_TYPES, type PaymentEventType } from '../../../webhooks/contracts/payment-event.types.js';
import { MAX_TIMER_MS } from '../simulator-timers.js';
import { CLI_COMMANDS_HELP, CLI_REPLIES } from './cli.messages.js';
import { deliveryTable } from './delivery-log.js';
import type { SimulatorSession } from './simulator-session.js';

/** What a command line did: text to print, and whether the user asked to stop. */
export interface CommandResult {
  output: string;
  quit?: boolean;
}

type Command = (args: string[], session: SimulatorSession) => CommandResult | Promise<CommandResult>;

const USAGE = {
  pay: 'usage: pay [amount] [outcome], e.g. pay 1500 succeeded',
  checkout: 'usage: checkout [amount], e.g. checkout 1500',
  trigger: 'usage: trigger <event> [intent-id], e.g. trigger payment_intent.succeeded <intent id>',
  drop: 'usage: drop <n>, e.g. drop 1 (drop 0 turns it off)',
  delay: 'usage: delay <ms> [n], e.g. delay 5000 1 (delay 0 turns it off)',
  duplicate: 'usage: duplicate <copies>, e.g. duplicate 2 (duplicate 1 turns it off)',
  resend: 'usage: resend <delivery-id> (the ids are in `deliveries`)',
} as const;

const count = (text: string | undefined): number | undefined =>
  text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;

const COMMANDS: Record<string, Command> = {
  help: () => ({ output: CLI_COMMANDS_HELP }),
  quit: () => ({ output: 'stopping', quit: true }),
  exit: () => ({ output: 'stopping', quit: true }),

  async pay([amountText, outcome = 'succeeded'], session) {
    const amount = amountText === undefined ? 1500 : count(amountText);
    if (amount === undefined) return { output: USAGE.pay };
    const intent = await session.createIntent(amount);
    const confirmed = await session.confirm(intent, outcome);
    return { output: `payment intent ${intent.id} (amount ${amount}) confirmed: ${confirmed.state}` };
  },

  async checkout([amountText], session) {
    const amount = amountText === undefined ? 1500 : count(amountText);
    if (amount === undefined) return { output: USAGE.checkout };
    const intent = await session.createIntent(amount);
    return { output: `payment intent ${intent.id}: open ${session.checkoutUrl(intent)}` };
  },

  trigger([type, intentId], session) {
    if (type === undefined || !(PAYMENT_EVENT_TYPES as readonly string[]).includes(type))
      return { output: `${USAGE.trigger}\n  events: ${PAYMENT_EVENT_TYPES.join(', ')}` };
    const event = session.simulator.emit(type as PaymentEventType, intentId, { apiKey: session.apiKey });
    return { output: `emitted ${type} (event ${event.id})` };
  },

  drop([nText], session) {
    const n = count(nText);
    if (n === undefined) return { output: USAGE.drop };
    session.simulator.controls.dropDeliveries({ next: n });
    return { output: n === 0 ? 'dropping off' : `dropping the next ${n} delivery(ies)` };
  },

  delay([msText, nText], session) {
    const ms = count(msText);
    const n = nText === undefined ? undefined : count(nText);
    if (ms === undefined || (nText !== undefined && n === undefined)) return { output: USAGE.delay };
    // Node clamps a longer timer to 1 ms: the delivery would go at once instead of never.
    if (ms > MAX_TIMER_MS) return { output: `${CLI_REPLIES.delayTooLong}\n${USAGE.delay}` };
    session.simulator.controls.delayDeliveries(ms, { next: n });
    if (ms === 0) return { output: 'delay off' };
    return { output: `delaying ${n === undefined ? 'every new delivery' : `the next ${n} delivery(ies)`} by ${ms} ms` };
  },

  hold: (_args, session) => {
    session.simulator.controls.hold();
    return { output: 'holding new deliveries (`release` sends them)' };
  },

  release: (_args, session) => {
    session.simulator.controls.release();
    return { output: 'released the held deliveries' };
  },

  duplicate([copiesText], session) {
    const copies = count(copiesText);
    if (copies === undefined || copies < 1) return { output: USAGE.duplicate };
    session.simulator.controls.duplicateDeliveries(copies);
    return { output: copies === 1 ? 'duplicates off' : `sending every delivery ${copies} times` };
  },

  async resend([id], session) {
    if (id === undefined) return { output: USAGE.resend };
    await session.resend(id);
    return { output: `resending ${id}` };
  },

  deliveries: (_args, session) => ({
    output: deliveryTable(session.simulator.webhookRequests(), session.simulator.controls.dropped),
  }),

  events: (_args, session) => ({
    output:
      session.simulator
        .events()
        .map((e) => `  ${e.id}  ${e.event}`)
        .join('\n') || '  no events yet',
  }),

  reset: (_args, session) => {
    session.simulator.controls.reset();
    return { output: 'every control off' };
  },
};

/**
 * Runs one line typed in the terminal. A refused command (unknown, bad arguments, an answer of the
 * simulator such as 409 on a resend in flight) prints a line and the simulator keeps running.
 */
export async function runCommandLine(line: string, session: SimulatorSession): Promise<CommandResult> {
  const [name, ...args] = line.trim().split(/\s+/);
  if (name === undefined || name === '') return { output: '' };
  const key = name.toLowerCase();
  const command = Object.hasOwn(COMMANDS, key) ? COMMANDS[key] : undefined;
  if (command === undefined) return { output: `unknown command '${name}': type \`help\` for the list` };
  try {
    return await command(args, session);
  } catch (error) {
    return { output: `${name} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}
