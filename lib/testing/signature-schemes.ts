import {
  isKeyableSignatureScheme,
  isWebhookSignatureScheme,
} from '../webhooks/verifiers/signature-scheme.predicate.js';
import { PaymentsConfigurationError } from '../errors/index.js';
import type { KeyableSignatureScheme } from '../webhooks/contracts/keyable-signature-scheme.interface.js';
import type { WebhookSignatureScheme } from '../webhooks/contracts/webhook-signature-scheme.interface.js';
import { hmacScheme } from '../webhooks/verifiers/hmac.scheme.js';
import { standardWebhooks } from '../webhooks/verifiers/standard-webhooks.scheme.js';
import type { VerifierClock } from '../webhooks/verifiers/verifier-clock.js';
import type { SimulatorSignatureOptions } from './simulator/payments-simulator.options.js';
import type { SignWebhookOptions } from './sign-webhook.options.js';

/** A well-formed key that signs nothing real: schemes described by options are re-keyed per endpoint. */
const UNKEYED_STANDARD_SECRET = `whsec_${Buffer.from('unkeyed-scheme-placeholder-key!!').toString('base64')}`;
const UNKEYED_HMAC_SECRET = 'unkeyed-scheme-placeholder-key';

/**
 * The one place the testing kit reads the scheme names of its older option forms (`{ scheme:
 * 'standard-webhooks' }`, `{ scheme: 'hmac', header, ... }`): everything else uses the scheme object.
 * `secret` keys it (signWebhook); without one it carries a placeholder key until `withSecrets`.
 * A scheme object is taken as it is when it is keyable (the simulator keys each endpoint with it);
 * one with only `name`, `sign` and `verify` is refused, naming `where` and the two missing members.
 */
export function signatureSchemeOf(
  options: SignWebhookOptions | SimulatorSignatureOptions | WebhookSignatureScheme | undefined,
  where: string,
  keyed: { secret?: string; now?: VerifierClock } = {},
): KeyableSignatureScheme {
  if (isKeyableSignatureScheme(options)) return options;
  if (isWebhookSignatureScheme(options)) {
    const name = typeof options.name === 'string' && options.name !== '' ? ` '${options.name}'` : '';
    throw new PaymentsConfigurationError(
      where,
      `is a signature scheme${name} without withSecrets and newSecret, which the simulator needs to give each endpoint a secret of its own`,
      'add withSecrets(secrets, { now }) (the same scheme with other keys) and newSecret() (a fresh key of its form) to the scheme, making it a KeyableSignatureScheme, or pass a built-in scheme: standardWebhooks(...), hmacScheme(...), standardWebhooksEd25519(...)',
    );
  }
  const described = (options ?? { scheme: 'standard-webhooks' }) as { scheme?: unknown } & Record<string, unknown>;
  const { scheme, secret: _secret, secrets: _secrets, timestamp: _timestamp, msgId: _msgId, ...rest } = described;
  if (scheme === 'standard-webhooks') {
    return standardWebhooks({ secrets: keyed.secret ?? UNKEYED_STANDARD_SECRET, now: keyed.now });
  }
  if (scheme === 'hmac') {
    return hmacScheme({ ...(rest as object), secrets: keyed.secret ?? UNKEYED_HMAC_SECRET, now: keyed.now } as never);
  }
  throw new PaymentsConfigurationError(
    where,
    `is not a known scheme (${String(scheme)})`,
    "pass { scheme: 'standard-webhooks' }, { scheme: 'hmac', header, ... }, or a scheme object: standardWebhooks(...), hmacScheme(...)",
  );
}
