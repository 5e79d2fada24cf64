import { registerAs } from '@nestjs/config';
import type { HmacAlgorithm, HmacSignedPayload, PaymentsEnvironment, SignatureEncoding } from '../lib/index.js';

/** The signature scheme the service signs deliveries with (given to merchants outside the reference). */
export type SampleWebhookScheme =
  | { kind: 'standard-webhooks' }
  | {
      kind: 'hmac';
      header: string;
      algorithm?: HmacAlgorithm;
      encoding?: SignatureEncoding;
      prefix?: string;
      timestampHeader?: string;
      signedPayload?: HmacSignedPayload;
    };

/** Everything the sample reads from its environment, checked once at boot. */
export interface SampleConfig {
  /** Port the app listens on (`PORT`, default 3000). */
  port: number;
  /** Address the service and the browser reach this app at (`PUBLIC_URL`, default http://localhost:PORT). */
  publicUrl: string;
  payments: {
    baseUrl: string;
    apiKey: string;
    environment: PaymentsEnvironment;
    /** Only for the local simulator, which speaks plain HTTP. */
    allowInsecureHttp: boolean;
  };
  webhooks: {
    /** Endpoint secrets (rotation: several). Empty: register an endpoint at boot and use its secret. */
    secrets: string[];
    scheme: SampleWebhookScheme;
  };
  checkout: {
    /** Address of the embedded checkout form (the iframe's `src`, before `?token=`). */
    formUrl: string;
  };
  shop: {
    defaultCurrency: string;
  };
}

/** Raised at boot when an environment variable is missing or wrong; names the variable and the fix. */
export class SampleConfigError extends Error {
  override readonly name = 'SampleConfigError';
}

function required(env: NodeJS.ProcessEnv, name: string, why: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') throw new SampleConfigError(`${name} is not set: ${why}`);
  return value.trim();
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback?: T): T | undefined {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  if (!(values as readonly string[]).includes(value)) throw new SampleConfigError(`${name} must be one of ${values.join(', ')}`);
  return value as T;
}

function readScheme(env: NodeJS.ProcessEnv): SampleWebhookScheme {
  const kind = oneOf(env, 'PAYMENTS_WEBHOOK_SCHEME', ['standard-webhooks', 'hmac'] as const, 'standard-webhooks');
  if (kind === 'standard-webhooks') return { kind };
  const timestampHeader = env['PAYMENTS_WEBHOOK_TIMESTAMP_HEADER'] || undefined;
  const algorithm = oneOf(env, 'PAYMENTS_WEBHOOK_ALGORITHM', ['sha256', 'sha512'] as const);
  const encoding = oneOf(env, 'PAYMENTS_WEBHOOK_ENCODING', ['hex', 'base64'] as const);
  const signedPayload = oneOf(env, 'PAYMENTS_WEBHOOK_SIGNED_PAYLOAD', ['body', 'timestamp.body'] as const);
  const prefix = env['PAYMENTS_WEBHOOK_SIGNATURE_PREFIX'] || undefined;
  return {
    kind: 'hmac',
    header: required(env, 'PAYMENTS_WEBHOOK_SIGNATURE_HEADER', 'the hmac scheme needs the name of the header carrying the signature'),
    ...(algorithm ? { algorithm } : {}),
    ...(encoding ? { encoding } : {}),
    ...(prefix ? { prefix } : {}),
    ...(timestampHeader ? { timestampHeader } : {}),
    ...(signedPayload ? { signedPayload } : {}),
  };
}

/**
 * Reads the sample's settings from `env`:
 *
 * | variable | meaning |
 * |---|---|
 * | `PORT` | port to listen on (default 3000) |
 * | `PUBLIC_URL` | where the service and the browser reach this app (default `http://localhost:PORT`) |
 * | `PAYMENTS_BASE_URL` | the service's (sandbox) base address; `npm run sample` sets the simulator's when unset |
 * | `PAYMENTS_API_KEY` | the secret API key (server-side only) |
 * | `PAYMENTS_ENVIRONMENT` | `sandbox` (default) or `production` |
 * | `PAYMENTS_WEBHOOK_SECRET` | endpoint secret(s), comma-separated while rotating; unset: register an endpoint at boot |
 * | `PAYMENTS_WEBHOOK_SCHEME` | `standard-webhooks` (default) or `hmac` (+ `PAYMENTS_WEBHOOK_SIGNATURE_HEADER`, `_SIGNATURE_PREFIX`, `_ALGORITHM`, `_ENCODING`, `_TIMESTAMP_HEADER`, `_SIGNED_PAYLOAD`) |
 * | `PAYMENTS_CHECKOUT_URL` | address of the embedded checkout form (the reference does not show it) |
 * | `PAYMENTS_ALLOW_INSECURE_HTTP` | `true` to allow an `http:` base address (the local simulator only) |
 * | `SHOP_CURRENCY` | default currency of orders (default EUR) |
 */
export function readSampleConfig(env: NodeJS.ProcessEnv): SampleConfig {
  const portText = env['PORT'] ?? '3000';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new SampleConfigError('PORT must be a port number (1-65535)');
  const publicUrl = (env['PUBLIC_URL'] || `http://localhost:${port}`).replace(/\/+$/, '');
  const secrets = (env['PAYMENTS_WEBHOOK_SECRET'] ?? '')
    .split(',')
    .map((secret) => secret.trim())
    .filter((secret) => secret !== '');
  const currency = env['SHOP_CURRENCY'] || 'EUR';
  if (!/^[A-Z]{3}$/.test(currency)) throw new SampleConfigError('SHOP_CURRENCY must be a three-letter upper-case code, e.g. EUR');
  return {
    port,
    publicUrl,
    payments: {
      baseUrl: required(env, 'PAYMENTS_BASE_URL', 'set the sandbox base address, or run `npm run sample` without it to use the local simulator'),
      apiKey: required(env, 'PAYMENTS_API_KEY', 'set the sandbox API key that goes with PAYMENTS_BASE_URL'),
      environment: oneOf(env, 'PAYMENTS_ENVIRONMENT', ['sandbox', 'production'] as const, 'sandbox')!,
      allowInsecureHttp: env['PAYMENTS_ALLOW_INSECURE_HTTP'] === 'true',
    },
    webhooks: { secrets, scheme: readScheme(env) },
    checkout: {
      formUrl: required(env, 'PAYMENTS_CHECKOUT_URL', 'set the address of the embedded checkout form the service gave you'),
    },
    shop: { defaultCurrency: currency },
  };
}

/**
 * The `sample` configuration namespace for `ConfigModule.forRoot({ load: [...] })`, read from `env`
 * (default `process.env`). Read it with `config.getOrThrow<SampleConfig['shop']>('sample.shop')`.
 */
export const sampleConfig = (env: NodeJS.ProcessEnv = process.env) => registerAs('sample', (): SampleConfig => readSampleConfig(env));
