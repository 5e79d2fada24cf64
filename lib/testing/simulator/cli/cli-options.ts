import { parseArgs } from 'node:util';
import { PaymentsError } from '../../../errors/payments.errors.js';
import { standardWebhooksEd25519 } from '../../../webhooks/verifiers/standard-webhooks-ed25519.scheme.js';
import type { SimulatorSignatureOptions } from '../payments-simulator.options.js';
import { MAX_TIMER_MS } from '../simulator-timers.js';
import { CLI_ERRORS, DEFAULT_PORT } from './cli.messages.js';

/** A command line the CLI refuses: one line naming the flag and the fix (exit code 2). */
export class CliUsageError extends PaymentsError {
  override readonly name = 'CliUsageError';
}

/** The schemes `--scheme` names: the built-in schemes' own names (`scheme.name`). */
export type CliSchemeName = 'standard-webhooks' | 'standard-webhooks-ed25519' | 'hmac';

/**
 * A well-formed Ed25519 private key that signs nothing real: the scheme needs one to exist, and every
 * endpoint re-keys it with its own (`--secret`, or a fresh one).
 */
const UNKEYED_ED25519_KEY = `whsk_${Buffer.alloc(32, 7).toString('base64')}`;

/** What `npx nestjs-payments simulator ...` was asked to do. */
export type CliRequest = { help: true } | { help: false; options: SimulatorCliOptions };

/** The validated flags of `simulator`. */
export interface SimulatorCliOptions {
  forwardTo: string | undefined;
  port: number;
  host: string;
  signature: SimulatorSignatureOptions;
  /** The scheme's name, for the start-up lines. */
  scheme: CliSchemeName;
  apiKey: string | undefined;
  secret: string | undefined;
  retrySchedule: number[] | undefined;
}

const FLAGS = {
  'forward-to': { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  scheme: { type: 'string' },
  'hmac-header': { type: 'string' },
  'hmac-algorithm': { type: 'string' },
  'hmac-encoding': { type: 'string' },
  'hmac-prefix': { type: 'string' },
  'api-key': { type: 'string' },
  secret: { type: 'string' },
  'retry-schedule': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type FlagName = keyof typeof FLAGS;

/**
 * Reads the command line (without `node` and the script). Parsed loosely (`strict: false`, tokens) so
 * every refusal is ours, names the flag as typed, and never echoes a value.
 */
export function parseCliArguments(argv: readonly string[]): CliRequest {
  const { tokens } = parseArgs({
    args: [...argv],
    options: FLAGS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Partial<Record<FlagName, string>> = {};
  let help = false;
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind === 'option-terminator') continue;
    const typed = token.rawName;
    if (!(token.name in FLAGS)) throw new CliUsageError(CLI_ERRORS.unknownFlag(typed));
    const name = token.name as FlagName;
    if (name === 'help') {
      if (token.value !== undefined) throw new CliUsageError(CLI_ERRORS.noValue(typed));
      help = true;
      continue;
    }
    if (token.value === undefined || token.value.startsWith('--'))
      throw new CliUsageError(CLI_ERRORS.missingValue(typed));
    if (values[name] !== undefined) throw new CliUsageError(CLI_ERRORS.repeated(typed));
    values[name] = token.value;
  }
  if (help) return { help: true };
  const [command, ...rest] = positionals;
  if (command === undefined) throw new CliUsageError(CLI_ERRORS.noCommand);
  if (command !== 'simulator') throw new CliUsageError(CLI_ERRORS.unknownCommand(command));
  if (rest.length > 0) throw new CliUsageError(CLI_ERRORS.extraArgument(rest[0]!));
  return { help: false, options: validate(values) };
}

function validate(values: Partial<Record<FlagName, string>>): SimulatorCliOptions {
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (values.port !== undefined && (!/^\d+$/.test(values.port) || port > 65_535))
    throw new CliUsageError(CLI_ERRORS.port);

  const forwardTo = values['forward-to'];
  if (forwardTo !== undefined && !isHttpUrl(forwardTo)) throw new CliUsageError(CLI_ERRORS.forwardTo);

  const scheme = (values.scheme ?? 'standard-webhooks') as CliSchemeName;
  if (scheme !== 'standard-webhooks' && scheme !== 'standard-webhooks-ed25519' && scheme !== 'hmac')
    throw new CliUsageError(CLI_ERRORS.scheme);
  const hmacFlags = ['hmac-header', 'hmac-algorithm', 'hmac-encoding', 'hmac-prefix'] as const;
  let signature: SimulatorSignatureOptions = { scheme: 'standard-webhooks' };
  if (scheme === 'standard-webhooks-ed25519') signature = standardWebhooksEd25519({ privateKeys: UNKEYED_ED25519_KEY });
  if (scheme === 'hmac') {
    const header = values['hmac-header'];
    if (header === undefined) throw new CliUsageError(CLI_ERRORS.hmacHeader);
    const algorithm = values['hmac-algorithm'] ?? 'sha256';
    if (algorithm !== 'sha256' && algorithm !== 'sha512') throw new CliUsageError(CLI_ERRORS.algorithm);
    const encoding = values['hmac-encoding'] ?? 'hex';
    if (encoding !== 'hex' && encoding !== 'base64') throw new CliUsageError(CLI_ERRORS.encoding);
    signature = { scheme: 'hmac', header, algorithm, encoding, prefix: values['hmac-prefix'] };
  } else {
    const stray = hmacFlags.find((flag) => values[flag] !== undefined);
    if (stray !== undefined) throw new CliUsageError(CLI_ERRORS.hmacOnly(`--${stray}`));
  }

  const apiKey = values['api-key'];
  if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey)) throw new CliUsageError(CLI_ERRORS.apiKey);

  if (values.secret !== undefined && forwardTo === undefined) throw new CliUsageError(CLI_ERRORS.secretNeedsEndpoint);
  if (values.secret !== undefined) checkSecretKind(scheme, values.secret);

  let retrySchedule: number[] | undefined;
  const schedule = values['retry-schedule'];
  if (schedule !== undefined) {
    if (!/^\d+(,\d+)*$/.test(schedule)) throw new CliUsageError(CLI_ERRORS.retrySchedule);
    retrySchedule = schedule.split(',').map(Number);
    if (retrySchedule.some((ms) => ms > MAX_TIMER_MS)) throw new CliUsageError(CLI_ERRORS.retrySchedule);
  }

  return {
    forwardTo,
    port,
    host: values.host ?? '127.0.0.1',
    signature,
    scheme,
    apiKey,
    secret: values.secret,
    retrySchedule,
  };
}

/**
 * A `--secret` of another scheme's kind, refused by its prefix with the scheme it belongs to (its form is
 * checked when the simulator starts). Never quotes the value.
 */
function checkSecretKind(scheme: CliSchemeName, secret: string): void {
  if (scheme === 'standard-webhooks-ed25519') {
    if (secret.startsWith('whpk_')) throw new CliUsageError(CLI_ERRORS.ed25519PublicKeyAsSecret);
    if (!secret.startsWith('whsk_')) throw new CliUsageError(CLI_ERRORS.secret(scheme));
  } else if (scheme === 'standard-webhooks' && (secret.startsWith('whsk_') || secret.startsWith('whpk_'))) {
    throw new CliUsageError(CLI_ERRORS.ed25519KeyWithoutScheme);
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
