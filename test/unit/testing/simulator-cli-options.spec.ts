import { describe, expect, it } from '@jest/globals';
import {
  CliUsageError,
  parseCliArguments,
  type SimulatorCliOptions,
} from '../../../lib/testing/simulator/cli/cli-options.js';
import { CLI_HELP } from '../../../lib/testing/simulator/cli/cli.messages.js';
import { signWebhook } from '../../../lib/testing/index.js';
import { standardWebhooksEd25519 } from '../../../lib/webhooks/index.js';
import { standardWebhooksEd25519PublicKey } from '../../../lib/webhooks/verifiers/standard-webhooks-ed25519.scheme.js';
import { ed25519KeyPair } from '../../fixtures/webhooks/ed25519-keys.js';

/*
 * `npx nestjs-payments simulator --scheme standard-webhooks-ed25519`: the flags as parsed, in process
 * (test/e2e/testing/simulator/cli/ runs the CLI as a process and delivers to a Nest app).
 */

const ENDPOINT = ['--forward-to', 'http://127.0.0.1:3000/payments/webhooks'];

function parsed(...args: string[]): SimulatorCliOptions {
  const request = parseCliArguments(['simulator', ...args]);
  if (request.help) throw new Error('parsed as --help');
  return request.options;
}

/** The CliUsageError message the command line is refused with. */
function refusal(...args: string[]): string {
  try {
    parseCliArguments(['simulator', ...args]);
  } catch (error) {
    expect(error).toBeInstanceOf(CliUsageError);
    return (error as Error).message;
  }
  throw new Error(`${args.join(' ')} was accepted`);
}

describe('simulator CLI flags: --scheme standard-webhooks-ed25519', () => {
  it('selects the Ed25519 scheme object: deliveries signed v1a', () => {
    const options = parsed('--scheme', 'standard-webhooks-ed25519', ...ENDPOINT);
    expect(options.scheme).toBe('standard-webhooks-ed25519');
    expect(options.signature).toMatchObject({ name: 'standard-webhooks-ed25519' });
    expect(options.secret).toBeUndefined();
    // The scheme the simulator is given makes whsk_ keys for endpoints registered without --secret.
    const fresh = (options.signature as ReturnType<typeof standardWebhooksEd25519>).newSecret();
    expect(fresh).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
  });

  it('accepts a whsk_ private key as --secret, kept as given', () => {
    const { whsk } = ed25519KeyPair();
    const options = parsed('--scheme', 'standard-webhooks-ed25519', ...ENDPOINT, '--secret', whsk);
    expect(options.secret).toBe(whsk);
  });

  it('the other schemes keep their options', () => {
    expect(parsed().scheme).toBe('standard-webhooks');
    expect(parsed().signature).toEqual({ scheme: 'standard-webhooks' });
    expect(parsed('--scheme', 'hmac', '--hmac-header', 'x-signature').signature).toMatchObject({ scheme: 'hmac' });
  });

  it.each([
    [['--scheme', 'v1a'], '--scheme must be standard-webhooks, standard-webhooks-ed25519 or hmac'],
    [
      ['--scheme', 'standard-webhooks-ed25519', '--hmac-header', 'x-signature'],
      '--hmac-header applies to --scheme hmac only: add --scheme hmac or drop --hmac-header',
    ],
    [
      ['--scheme', 'standard-webhooks-ed25519', '--hmac-prefix', 'sha256='],
      '--hmac-prefix applies to --scheme hmac only: add --scheme hmac or drop --hmac-prefix',
    ],
    [
      ['--scheme', 'standard-webhooks-ed25519', '--secret', 'whsk_x'],
      '--secret is the secret of the --forward-to endpoint: add --forward-to <url> or drop --secret',
    ],
  ])('%j is refused naming the flag and the fix', (args, message) => {
    expect(refusal(...args)).toBe(message);
  });

  it('--secret that is not a whsk_ key is refused by its kind, never quoted', () => {
    const { whpk, whsk } = ed25519KeyPair();
    const secrets = [whpk, 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', 'my-hmac-secret'];
    const messages = secrets.map((secret) =>
      refusal('--scheme', 'standard-webhooks-ed25519', ...ENDPOINT, '--secret', secret),
    );
    expect(messages[0]).toBe(
      '--secret is a public key (whpk_), which cannot sign: pass the private key (whsk_...) to the simulator and the public key to your app (or leave --secret out to get a fresh pair)',
    );
    expect(messages[1]).toMatch(/^--secret is not an Ed25519 private key: pass whsk_ followed by the base64/);
    expect(messages[2]).toBe(messages[1]);
    // The other way round: an Ed25519 key given to the default (symmetric) scheme names the flag to add.
    for (const key of [whsk, whpk]) {
      expect(refusal(...ENDPOINT, '--secret', key)).toMatch(/add --scheme standard-webhooks-ed25519/);
    }
    for (const [index, message] of messages.entries()) expect(message).not.toContain(secrets[index]!.slice(5));
  });

  it('--help names the scheme, the private key it takes and the public key it prints', () => {
    expect(parseCliArguments(['--help'])).toEqual({ help: true });
    expect(CLI_HELP).toContain('standard-webhooks-ed25519 (v1a');
    expect(CLI_HELP).toContain('whsk_');
    expect(CLI_HELP).toContain('whpk_ public key');
  });
});

describe('standardWebhooksEd25519PublicKey', () => {
  it("is the private key's public half: what it signs verifies with standardWebhooksEd25519({ publicKeys })", () => {
    const { whpk, whsk } = ed25519KeyPair();
    expect(standardWebhooksEd25519PublicKey(whsk)).toBe(whpk);
    const signed = signWebhook({ id: 'evt_1' }, standardWebhooksEd25519({ privateKeys: whsk }));
    const verdict = standardWebhooksEd25519({ publicKeys: standardWebhooksEd25519PublicKey(whsk) }).verify({
      rawBody: Buffer.from(signed.rawBody),
      headers: signed.headers,
    });
    expect(verdict).toEqual({ valid: true });
  });

  it('refuses a public key or a malformed key naming the option, never quoting it', () => {
    const { whpk } = ed25519KeyPair();
    const messageOf = (key: string): string => {
      try {
        standardWebhooksEd25519PublicKey(key);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(messageOf(whpk)).toMatch(
      /option `standardWebhooksEd25519PublicKey\(privateKey\)`: is a public key \(whpk_\)/,
    );
    expect(messageOf('whsk_%%%top')).toMatch(
      /`standardWebhooksEd25519PublicKey\(privateKey\)`: is not whsk_ followed by/,
    );
    expect(messageOf(whpk)).not.toContain(whpk.slice(5));
    expect(messageOf('whsk_%%%top')).not.toContain('%%%top');
  });
});
