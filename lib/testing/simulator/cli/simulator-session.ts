import { randomBytes } from 'node:crypto';
import { PaymentsError } from '../../../errors/payments.errors.js';
import { PaymentsSimulator } from '../payments-simulator.js';
import type { SimulatedWebhookEndpoint } from '../simulator-state.js';
import { standardWebhooksEd25519PublicKey } from '../../../webhooks/verifiers/standard-webhooks-ed25519.scheme.js';
import { CLI_ERRORS } from './cli.messages.js';
import { CliUsageError, type SimulatorCliOptions } from './cli-options.js';

/** An intent as the simulator's `POST /payment_intents` answers it (tokens included). */
export interface CreatedIntent {
  id: string;
  state: string;
  amount?: number;
  embed_token: string;
  render_token: string;
}

/**
 * One running simulator of the CLI: the server, the one API key, the forwarded endpoint. It reaches the
 * simulator's intents and webhook requests through the documented HTTP API with that key, as the app
 * would, so what the terminal does is what the service does.
 */
export class SimulatorSession {
  readonly simulator: PaymentsSimulator;
  readonly apiKey: string;
  #endpoint: SimulatedWebhookEndpoint | undefined;
  #baseUrl = '';

  constructor(readonly options: SimulatorCliOptions) {
    this.apiKey = options.apiKey ?? `sk_test_${randomBytes(18).toString('base64url')}`;
    this.simulator = new PaymentsSimulator({
      apiKeys: [this.apiKey],
      signature: options.signature,
      retrySchedule: options.retrySchedule,
      host: options.host,
    });
  }

  /** Starts the server and registers `--forward-to` (with `--secret` when given). */
  async start(): Promise<void> {
    if (this.options.forwardTo !== undefined && this.options.secret !== undefined) {
      // Checked before listening, so a bad secret leaves no server behind (and the message quotes no value).
      try {
        this.simulator.verifierFor(this.options.secret);
      } catch {
        throw new CliUsageError(CLI_ERRORS.secret(this.options.scheme));
      }
    }
    try {
      this.#baseUrl = await this.simulator.start(this.options.port);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new CliUsageError(CLI_ERRORS.portInUse(this.options.port));
      if (code === 'EACCES') throw new CliUsageError(CLI_ERRORS.portDenied(this.options.port));
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
        throw new CliUsageError(CLI_ERRORS.host);
      throw error;
    }
    if (this.options.forwardTo !== undefined) {
      try {
        this.#endpoint = this.simulator.registerWebhookEndpoint({
          url: this.options.forwardTo,
          apiKey: this.apiKey,
          secret: this.options.secret,
        });
      } catch (error) {
        await this.simulator.stop(); // nothing left listening behind a failed start
        throw error;
      }
    }
  }

  get baseUrl(): string {
    return this.#baseUrl;
  }

  /** The forwarded endpoint (with its secret), if `--forward-to` was given. */
  get endpoint(): SimulatedWebhookEndpoint | undefined {
    return this.#endpoint;
  }

  /**
   * With `--scheme standard-webhooks-ed25519`: the public key (`whpk_...`) of the endpoint's private key,
   * what the app verifies with. The private key (the endpoint's `secret`) is never printed.
   */
  get publicKey(): string | undefined {
    if (this.#endpoint === undefined || this.options.scheme !== 'standard-webhooks-ed25519') return undefined;
    return standardWebhooksEd25519PublicKey(this.#endpoint.secret);
  }

  /** `POST /payment_intents` with the session's key. */
  createIntent(amount: number): Promise<CreatedIntent> {
    return this.#api('POST', '/payment_intents', { amount }) as Promise<CreatedIntent>;
  }

  /** What the checkout iframe does on "Pay": `POST /embed/confirm` with the intent's embed token. */
  async confirm(intent: CreatedIntent, outcome: string): Promise<{ state: string }> {
    const res = await fetch(`${this.#baseUrl}/embed/confirm`, {
      method: 'POST',
      headers: { authorization: `Embed ${intent.embed_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome }),
    });
    return (await answer(res)) as { state: string };
  }

  /** The checkout page of an intent, with its embed token in the fragment (never sent to a server). */
  checkoutUrl(intent: CreatedIntent): string {
    return `${this.#baseUrl}/embed/checkout?token=${encodeURIComponent(intent.render_token)}&dev=1#embed_token=${encodeURIComponent(intent.embed_token)}`;
  }

  /** `POST /webhook_requests/{id}/resend` with the session's key. */
  resend(deliveryId: string): Promise<unknown> {
    return this.#api('POST', `/webhook_requests/${encodeURIComponent(deliveryId)}/resend`);
  }

  /** Stops the server; pending retries are cancelled, deliveries in flight aborted. */
  stop(): Promise<void> {
    return this.simulator.stop();
  }

  async #api(method: string, path: string, body?: object): Promise<unknown> {
    const res = await fetch(`${this.#baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': this.apiKey, 'x-api-version': '1', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return answer(res);
  }
}

/** The JSON of a 2xx answer; otherwise an Error with the simulator's own message (it quotes no key). */
async function answer(res: Response): Promise<unknown> {
  const json = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!res.ok) throw new PaymentsError(json.error?.message ?? CLI_ERRORS.answered(res.status));
  return json;
}
