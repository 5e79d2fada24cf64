import { randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import { PAYMENT_OUTCOMES, renderCheckoutPage, SETUP_OUTCOMES } from './checkout-page.html.js';
import { RenderTokenCodec } from './render-token.codec.js';
import { SimulatorEventsEmitter } from './simulator-events.emitter.js';
import { header, readJsonObject, sendHtml, sendJson, SimulatorHttpError } from './simulator-http.util.js';
import type { IntentRecord, SimulatorState } from './simulator-state.js';

/** The tokens a create answer carries (field names are the simulator's choice: the reference does not show them). */
export interface CheckoutTokens {
  embed_token: string;
  embed_token_expires_at: string;
  render_token: string;
}

/**
 * The embedded checkout ("the iframe"): issues the embed and render tokens of a new intent, serves the
 * form a render token loads (`GET /embed/checkout?token=`), and takes the form's one confirm
 * (`POST /embed/confirm` with `Authorization: Embed <token>`).
 */
export class SimulatorCheckoutHandler {
  readonly #renderTokens = new RenderTokenCodec();

  constructor(
    private readonly state: SimulatorState,
    private readonly emitter: SimulatorEventsEmitter,
    private readonly now: () => number,
    private readonly embedTtlMs: number,
  ) {}

  /** Draws the embed token (stored) and the render token (self-contained, MACed) of a new intent. */
  issueTokens(intent: IntentRecord, origins: string[]): CheckoutTokens {
    const expiresAt = this.now() + this.embedTtlMs;
    const embedToken = `emb_${randomBytes(24).toString('base64url')}`;
    this.state.embedTokens.set(embedToken, { intentId: intent.id, expiresAt, used: false });
    const renderToken = this.#renderTokens.encode({
      intentId: intent.id,
      kind: intent.kind,
      origins,
      methods: ['card'],
      environment: 'sandbox',
      expiresAt,
    });
    return {
      embed_token: embedToken,
      embed_token_expires_at: new Date(expiresAt).toISOString(),
      render_token: renderToken,
    };
  }

  /** `allowed_origins` of a create call: absent means any origin (`['*']`), else exact `scheme://host[:port]` values. */
  static parseOrigins(value: unknown): string[] {
    if (value === undefined || value === null) return ['*'];
    if (!Array.isArray(value) || value.length === 0)
      throw new SimulatorHttpError(
        400,
        'invalid_allowed_origins',
        'allowed_origins must be a non-empty array of origins.',
      );
    return value.map((origin) => {
      let parsed: URL | undefined;
      try {
        parsed = typeof origin === 'string' ? new URL(origin) : undefined;
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || parsed.origin !== origin) {
        throw new SimulatorHttpError(
          400,
          'invalid_allowed_origins',
          'Each allowed origin must be scheme://host[:port], without a path.',
        );
      }
      return origin;
    });
  }

  /** `GET /embed/checkout?token=<render token>[&dev=1]`: the form, framable by the token's origins only. */
  page(res: http.ServerResponse, url: URL): void {
    const claims = this.#renderTokens.decode(url.searchParams.get('token') ?? '', this.now());
    const intent = claims === undefined ? undefined : this.state.intents.get(claims.intentId);
    if (claims === undefined || intent === undefined) {
      return sendHtml(
        res,
        401,
        '<!doctype html><title>Checkout</title><p>This checkout link is invalid or has expired.</p>',
      );
    }
    const nonce = randomBytes(16).toString('base64');
    const ancestors = claims.origins.includes('*') ? '*' : claims.origins.join(' ');
    const devPanel = url.searchParams.get('dev') === '1';
    sendHtml(res, 200, renderCheckoutPage(claims, intent, nonce, { devPanel }), {
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`,
    });
  }

  /** `POST /embed/confirm`: one per embed token, before it expires. */
  async confirm(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const match = /^Embed\s+(\S+)$/i.exec(header(req, 'authorization') ?? '');
    if (match === null)
      throw new SimulatorHttpError(401, 'missing_embed_token', 'Send Authorization: Embed <embed token>.');
    const token = this.state.embedTokens.get(match[1]!);
    if (token === undefined) throw new SimulatorHttpError(401, 'invalid_embed_token', 'The embed token is not known.');
    if (this.now() >= token.expiresAt)
      throw new SimulatorHttpError(401, 'embed_token_expired', 'The embed token has expired.');
    if (token.used)
      throw new SimulatorHttpError(409, 'embed_token_used', 'The embed token has already confirmed its intent.');
    const body = await readJsonObject(req);
    const intent = this.state.intents.get(token.intentId)!;
    const outcome = body['outcome'] ?? 'succeeded';
    const allowed: readonly string[] = intent.kind === 'payment_intent' ? PAYMENT_OUTCOMES : SETUP_OUTCOMES;
    if (typeof outcome !== 'string' || !allowed.includes(outcome)) {
      throw new SimulatorHttpError(400, 'invalid_outcome', `outcome must be one of ${allowed.join(', ')}.`);
    }
    // Re-checked after the body was read: two confirms racing with one token must not both pass.
    if (token.used)
      throw new SimulatorHttpError(409, 'embed_token_used', 'The embed token has already confirmed its intent.');
    token.used = true;
    intent.state = outcome;
    this.emitter.emit(intent, SimulatorEventsEmitter.typesForOutcome(intent, outcome));
    sendJson(res, 200, { id: intent.id, object: intent.kind, state: intent.state });
  }
}
