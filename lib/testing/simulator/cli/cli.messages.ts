/**
 * Texts of `npx nestjs-payments simulator`: the help, the one-line usage errors, the command replies.
 * None of them ever quotes a flag's value (a key or a secret may be one).
 */

import { PAYMENT_OUTCOMES } from '../checkout-page.html.js';
import { MAX_TIMER_MS } from '../simulator-timers.js';

/** The port the simulator listens on without `--port`. */
export const DEFAULT_PORT = 4010;

/** `words` joined by ', ' in lines of at most `width` characters, each after `indent` spaces. */
function wrapped(words: readonly string[], indent: number, width = 104): string {
  const lines: string[] = [];
  let line = '';
  for (const [index, word] of words.entries()) {
    const item = index < words.length - 1 ? `${word},` : word;
    if (line !== '' && indent + line.length + 1 + item.length > width) {
      lines.push(line);
      line = item;
    } else line = line === '' ? item : `${line} ${item}`;
  }
  lines.push(line);
  return lines.map((text) => `${' '.repeat(indent)}${text}`).join('\n');
}

/** The line commands, one line each (also what `help` prints). `pay` lists exactly what the confirm takes. */
export const CLI_COMMANDS_HELP = `  pay [amount] [outcome]       create a payment intent (default 1500) and confirm it as the checkout
                               would, with the outcome (default succeeded):
${wrapped(PAYMENT_OUTCOMES, 31)}
  checkout [amount]            create a payment intent and print its checkout page URL, to click through
  trigger <event> [intent-id]  emit <event> for that intent (moving it to the state it names), or a new one
  late <event> <intent-id>     emit <event> for that intent as a late delivery of an earlier state: its
                               data shows that state, the intent stays where it is
  drop <n>                     drop the next n deliveries for good (no attempt, no retry); drop 0: off
  delay <ms> [n]               wait ms before the first attempt of the next n deliveries (all, without n)
  hold | release [order]       keep new deliveries back, then send the backlog one after the other
                               (order: fifo (default), reverse, shuffle)
  out-of-order <order>         send the events of each payment one after the other in that order
                               (fifo, reverse, shuffle; off: together again)
  duplicate <copies>           send every delivery that many times (duplicate 1: off)
  resend <delivery-id>         send a delivery again now (same event id, fresh signature)
  deliveries                   every delivery: event, status, attempts and the answers received
  events                       every event emitted so far
  reset                        turn every control off
  help                         this list
  quit                         stop the simulator`;

export const CLI_HELP = `Usage: npx nestjs-payments simulator [flags]

Starts a local payment service (the package's PaymentsSimulator): the documented API, the embedded
checkout page, and signed webhook deliveries to your app. It prints its base URL, an API key and the
endpoint secret: local test values, printed on purpose, for your app's environment. With
--scheme standard-webhooks-ed25519 it prints the endpoint's public key instead: the private key it
signs with is never printed.

Flags:
  --forward-to <url>       register this webhook endpoint and deliver every event to it,
                           e.g. http://localhost:3000/payments/webhooks
  --port <n>               port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host <address>         interface to listen on (default 127.0.0.1)
  --scheme <name>          how deliveries are signed: standard-webhooks (default, v1: a shared whsec_
                           secret), standard-webhooks-ed25519 (v1a: signed with a whsk_ private key,
                           your app verifies with the printed whpk_ public key) or hmac
  --hmac-header <name>     with --scheme hmac: the signature header (required), e.g. x-signature
  --hmac-algorithm <name>  with --scheme hmac: sha256 (default) or sha512
  --hmac-encoding <name>   with --scheme hmac: hex (default) or base64
  --hmac-prefix <text>     with --scheme hmac: text before the digest, e.g. sha256=
  --api-key <key>          the API key to accept (default: a fresh sk_test_... key)
  --secret <secret>        the endpoint secret to sign with, e.g. the one in your app's .env
                           (default: a fresh one in the scheme's form); with
                           --scheme standard-webhooks-ed25519, the private key (whsk_...)
  --retry-schedule <ms,..> delays before each retry of a failed delivery (default 1000,5000,30000,120000,600000)
  -h, --help               print this help

Commands (type them while it runs):
${CLI_COMMANDS_HELP}
Ctrl-C (or SIGTERM, or \`quit\`) stops it: the server closes and pending retries are cancelled.`;

/** One-line usage errors (exit 2): each names the flag and the fix. */
export const CLI_ERRORS = {
  noCommand: 'missing command: run `npx nestjs-payments simulator` (see --help)',
  unknownCommand: (command: string): string =>
    `unknown command '${command}': the only command is \`simulator\` (see --help)`,
  unknownFlag: (flag: string): string => `unknown flag ${flag}: see --help for the flags`,
  missingValue: (flag: string): string => `flag ${flag} needs a value, e.g. ${flag}=<value> (see --help)`,
  noValue: (flag: string): string => `flag ${flag} takes no value`,
  repeated: (flag: string): string => `flag ${flag} is given twice: pass it once`,
  extraArgument: (arg: string): string => `unexpected argument '${arg}': flags start with -- (see --help)`,
  port: '--port must be an integer from 0 to 65535, e.g. --port 4010 (0 picks a free port)',
  forwardTo: '--forward-to must be an absolute http(s) URL, e.g. --forward-to http://localhost:3000/payments/webhooks',
  scheme: '--scheme must be standard-webhooks, standard-webhooks-ed25519 or hmac',
  hmacHeader: '--scheme hmac needs --hmac-header <name>, the header your verifier reads the signature from',
  hmacOnly: (flag: string): string => `${flag} applies to --scheme hmac only: add --scheme hmac or drop ${flag}`,
  algorithm: '--hmac-algorithm must be sha256 or sha512',
  encoding: '--hmac-encoding must be hex or base64',
  retrySchedule: `--retry-schedule must be delays in ms from 0 to ${MAX_TIMER_MS} (about 24.8 days, the longest a Node timer waits) separated by commas, e.g. --retry-schedule 1000,5000`,
  secretNeedsEndpoint: '--secret is the secret of the --forward-to endpoint: add --forward-to <url> or drop --secret',
  apiKey: '--api-key must be a non-empty key without spaces or control characters, e.g. --api-key sk_test_local',
  secret: (scheme: string): string =>
    scheme === 'standard-webhooks'
      ? '--secret is not a Standard Webhooks secret: pass whsec_ followed by base64 (or leave it out to get a fresh one)'
      : scheme === 'standard-webhooks-ed25519'
        ? '--secret is not an Ed25519 private key: pass whsk_ followed by the base64 of its 32-byte seed (or leave it out to get a fresh one)'
        : '--secret must be a non-empty text (or leave it out to get a fresh one)',
  ed25519PublicKeyAsSecret:
    '--secret is a public key (whpk_), which cannot sign: pass the private key (whsk_...) to the simulator and the public key to your app (or leave --secret out to get a fresh pair)',
  ed25519KeyWithoutScheme:
    '--secret is an Ed25519 key (whsk_/whpk_), not a whsec_ secret: add --scheme standard-webhooks-ed25519 (with the private key, whsk_...) or pass a whsec_ secret',
  portDenied: (port: number): string =>
    `port ${port} needs privileges to listen on: pass --port 1024 or above (or --port 0 for a free one)`,
  host: '--host is not an address of this machine: pass one, e.g. --host 127.0.0.1 (the default)',
  answered: (status: number): string => `the simulator answered ${status}`,
  portInUse: (port: number): string =>
    `port ${port} is in use: pass --port <another port> (or --port 0 for a free one)`,
} as const;

/** Replies of the line commands that refuse what was typed (the simulator keeps running). */
export const CLI_REPLIES = {
  delayTooLong: `delay: <ms> must be from 0 to ${MAX_TIMER_MS} (about 24.8 days, the longest a Node timer waits; a longer one would fire at once)`,
} as const;
