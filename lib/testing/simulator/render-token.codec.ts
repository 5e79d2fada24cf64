import { createHmac, randomBytes } from 'node:crypto';
import { digestsEqual } from '../../webhooks/verifiers/signature-compare.util.js';

/** What a render token stands for: the intent it loads, the origins allowed to frame it, and its expiry. */
export interface RenderTokenClaims {
  intentId: string;
  kind: 'payment_intent' | 'setup_intent';
  /** Origins allowed to mount the iframe; ['*'] when the create call named none. */
  origins: string[];
  /** Payment methods the form offers (the simulator offers one, 'card'). */
  methods: string[];
  environment: 'sandbox';
  /** Expiry, ms since epoch. */
  expiresAt: number;
}

/**
 * Render tokens that encode their claims (base64url JSON) and carry an HMAC under a key drawn when the
 * simulator starts, so the checkout page trusts a token it did not store and a forged one fails.
 */
export class RenderTokenCodec {
  readonly #key = randomBytes(32);

  encode(claims: RenderTokenClaims): string {
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${body}.${this.#mac(body).toString('base64url')}`;
  }

  /** The claims of a genuine, unexpired token, else undefined. */
  decode(token: string, nowMs: number): RenderTokenClaims | undefined {
    const [body, mac, extra] = token.split('.');
    if (body === undefined || mac === undefined || extra !== undefined) return undefined;
    if (!digestsEqual(this.#mac(body), Buffer.from(mac, 'base64url'))) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as RenderTokenClaims;
      return claims.expiresAt > nowMs ? claims : undefined;
    } catch {
      return undefined;
    }
  }

  #mac(body: string): Buffer {
    return createHmac('sha256', this.#key).update(body).digest();
  }
}
