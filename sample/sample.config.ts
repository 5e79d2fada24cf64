import { registerAs } from '@nestjs/config';
import type { PaymentsEnvironment } from '../lib/index.js';
import type { HmacAlgorithm, HmacSignedPayload, SignatureEncoding } from '../lib/webhooks/index.js';

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
    /**
     * Origins allowed to frame the form (`SHOP_ALLOWED_ORIGINS`). Empty: the origin the page was
     * opened at (when it matches the request's Host) plus PUBLIC_URL's.
     */
    allowedOrigins: string[];
    /** How long the page waits for the form before it shows what to fix, in ms (`SHOP_FORM_LOAD_TIMEOUT_MS`). */
    formLoadTimeoutMs: number;
  };
  shop: {
    defaultCurrency: string;
    /** Show the developer panel (outcome chooser, order id, event notes) to everyone (`SHOP_DEV_PANEL`). Else only with `?dev=1`. */
    devPanel: boolean;
  };
  admin: {
    /** Bearer token of the operator view (`SHOP_ADMIN_TOKEN`); unset: `/admin` is disabled. */
    token: string | undefined;
  };
  /** Whether `npm run sample` started the local simulator for this app (`SAMPLE_EMBEDDED_SIMULATOR=true`): the page says so. */
  embeddedSimulator: boolean;
  /** First reconciliation check of a new order's intent, in seconds (`SAMPLE_RECONCILE_AFTER_SECONDS`, default 60). */
  reconcileAfterSeconds: number;
  /** Queued processing (BullMQ) when `SAMPLE_QUEUE_REDIS_URL` is set; else inline. */
  queue: { redisUrl: string; name: string; attempts: number } | undefined;
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

function oneOf<T extends string>(
  env: NodeJS.ProcessEnv,
  name: string,
  values: readonly T[],
  fallback?: T,
): T | undefined {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  if (!(values as readonly string[]).includes(value))
    throw new SampleConfigError(`${name} must be one of ${values.join(', ')}`);
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
    header: required(
      env,
      'PAYMENTS_WEBHOOK_SIGNATURE_HEADER',
      'the hmac scheme needs the name of the header carrying the signature',
    ),
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
 * | `SHOP_ALLOWED_ORIGINS` | comma-separated origins that may frame the payment form; unset: the address the page was opened at |
 * | `SHOP_FORM_LOAD_TIMEOUT_MS` | how long the page waits for the payment form before it says what to fix (default 6000) |
 * | `SHOP_DEV_PANEL` | `true` shows the developer panel to everyone; else only with `?dev=1` |
 * | `SHOP_ADMIN_TOKEN` | bearer token of the operator view `/admin` (16+ characters); unset: `/admin` is disabled |
 * | `SAMPLE_QUEUE_REDIS_URL` | e.g. `redis://127.0.0.1:6379`: queued processing (BullMQ) instead of inline |
 * | `SAMPLE_QUEUE_NAME`, `SAMPLE_QUEUE_ATTEMPTS` | queue name (default `sample-shop-webhooks`) and attempts per event (default 5) |
 */
export function readSampleConfig(env: NodeJS.ProcessEnv): SampleConfig {
  const portText = env['PORT'] ?? '3000';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new SampleConfigError('PORT must be a port number (1-65535)');
  const publicUrl = (env['PUBLIC_URL'] || `http://localhost:${port}`).replace(/\/+$/, '');
  const secrets = (env['PAYMENTS_WEBHOOK_SECRET'] ?? '')
    .split(',')
    .map((secret) => secret.trim())
    .filter((secret) => secret !== '');
  const currency = env['SHOP_CURRENCY'] || 'EUR';
  if (!/^[A-Z]{3}$/.test(currency))
    throw new SampleConfigError('SHOP_CURRENCY must be a three-letter upper-case code, e.g. EUR');
  const allowedOrigins = (env['SHOP_ALLOWED_ORIGINS'] ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '')
    .map((origin) => {
      let parsed: URL | undefined;
      try {
        parsed = new URL(origin);
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) {
        throw new SampleConfigError(
          `SHOP_ALLOWED_ORIGINS: '${origin}' is not an origin; write scheme://host[:port] without a path, e.g. http://127.0.0.1:${port}`,
        );
      }
      return origin;
    });
  const formLoadTimeoutMs = Number(env['SHOP_FORM_LOAD_TIMEOUT_MS'] || 6000);
  if (!Number.isInteger(formLoadTimeoutMs) || formLoadTimeoutMs < 500 || formLoadTimeoutMs > 60_000) {
    throw new SampleConfigError(
      'SHOP_FORM_LOAD_TIMEOUT_MS must be a whole number of milliseconds between 500 and 60000 (default 6000)',
    );
  }
  const adminToken = env['SHOP_ADMIN_TOKEN'] || undefined;
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new SampleConfigError(
      'SHOP_ADMIN_TOKEN must be at least 16 characters (e.g. `openssl rand -hex 16`), or unset to disable /admin',
    );
  }
  const reconcileAfterSeconds = Number(env['SAMPLE_RECONCILE_AFTER_SECONDS'] || 60);
  if (!Number.isInteger(reconcileAfterSeconds) || reconcileAfterSeconds < 0 || reconcileAfterSeconds > 86_400) {
    throw new SampleConfigError(
      'SAMPLE_RECONCILE_AFTER_SECONDS must be a whole number of seconds from 0 to 86400 (default 60)',
    );
  }
  let queue: SampleConfig['queue'];
  const redisUrl = env['SAMPLE_QUEUE_REDIS_URL'] || undefined;
  if (redisUrl !== undefined) {
    if (!/^rediss?:\/\//.test(redisUrl))
      throw new SampleConfigError(
        'SAMPLE_QUEUE_REDIS_URL must be a redis:// or rediss:// address, e.g. redis://127.0.0.1:6379',
      );
    const attempts = Number(env['SAMPLE_QUEUE_ATTEMPTS'] || 5);
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > 50)
      throw new SampleConfigError('SAMPLE_QUEUE_ATTEMPTS must be a whole number from 1 to 50 (default 5)');
    queue = { redisUrl, name: env['SAMPLE_QUEUE_NAME'] || 'sample-shop-webhooks', attempts };
  }
  return {
    port,
    publicUrl,
    payments: {
      baseUrl: required(
        env,
        'PAYMENTS_BASE_URL',
        'set the sandbox base address, or run `npm run sample` without it to use the local simulator',
      ),
      apiKey: required(env, 'PAYMENTS_API_KEY', 'set the sandbox API key that goes with PAYMENTS_BASE_URL'),
      environment: oneOf(env, 'PAYMENTS_ENVIRONMENT', ['sandbox', 'production'] as const, 'sandbox')!,
      allowInsecureHttp: env['PAYMENTS_ALLOW_INSECURE_HTTP'] === 'true',
    },
    webhooks: { secrets, scheme: readScheme(env) },
    reconcileAfterSeconds,
    checkout: {
      formUrl: required(
        env,
        'PAYMENTS_CHECKOUT_URL',
        'set the address of the embedded checkout form the service gave you',
      ),
      allowedOrigins,
      formLoadTimeoutMs,
    },
    shop: { defaultCurrency: currency, devPanel: env['SHOP_DEV_PANEL'] === 'true' },
    admin: { token: adminToken },
    embeddedSimulator: env['SAMPLE_EMBEDDED_SIMULATOR'] === 'true',
    queue,
  };
}

/**
 * The `sample` configuration namespace for `ConfigModule.forRoot({ load: [...] })`, read from `env`
 * (default `process.env`). Read it with `config.getOrThrow<SampleConfig['shop']>('sample.shop')`.
 */
export const sampleConfig = (env: NodeJS.ProcessEnv = process.env) =>
  registerAs('sample', (): SampleConfig => readSampleConfig(env));
