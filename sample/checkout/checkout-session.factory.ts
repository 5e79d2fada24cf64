import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { PaymentIntent, SetupIntent } from '../../lib/index.js';
import type { SampleConfig } from '../sample.config.js';
import { resolveCheckoutFraming, type CheckoutFraming, type PageAddress } from './checkout-framing.js';

/**
 * What the browser needs to mount the embedded form and confirm once, and nothing more: never the
 * API key, never the intent as the service sent it [A4].
 */
export interface CheckoutSession {
  /** The iframe's `src`: the form's address with the render token as query parameter `token` [C1]. */
  formUrl: string;
  /** Origin of the form, the only target the page posts the embed token to. */
  formOrigin: string;
  /** Authorises exactly one confirm, inside the iframe (`Authorization: Embed <token>`) [C2]. */
  embedToken: string;
  /** When the embed token stops working, if the service said. */
  embedTokenExpiresAt?: string;
  /** Origins allowed to frame the form: the page compares its own and explains what to fix if it is missing. */
  frameAncestors: string[];
}

/**
 * Field names of the tokens in a create answer. The reference does not show them (nor how a render
 * token is obtained): these are the local simulator's choices. Adapt them to what your sandbox returns.
 */
export const CHECKOUT_TOKEN_FIELDS = Object.freeze({
  embedToken: 'embed_token',
  embedTokenExpiresAt: 'embed_token_expires_at',
  renderToken: 'render_token',
});

/** Thrown when a create answer lacks a token the checkout needs. */
export class CheckoutTokenMissingError extends Error {
  override readonly name = 'CheckoutTokenMissingError';
}

/** Turns a freshly created intent into a `CheckoutSession`. */
@Injectable()
export class CheckoutSessionFactory {
  private readonly logger = new Logger('Checkout');
  readonly #formUrl: URL;
  readonly #shopOrigin: string;
  readonly #configuredOrigins: readonly string[];

  constructor(config: ConfigService) {
    const checkout = config.getOrThrow<SampleConfig['checkout']>('sample.checkout');
    this.#formUrl = new URL(checkout.formUrl);
    this.#configuredOrigins = checkout.allowedOrigins;
    this.#shopOrigin = new URL(config.getOrThrow<string>('sample.publicUrl')).origin;
  }

  /**
   * Who may frame the form for a checkout started from `page` (see `resolveCheckoutFraming`). Logs,
   * at warn level, the fix when the page's own origin is not allowed: the form will not load there.
   */
  framingFor(page: PageAddress = {}): CheckoutFraming {
    const framing = resolveCheckoutFraming(this.#shopOrigin, this.#configuredOrigins, page);
    if (!framing.pageAllowed) {
      this.logger.warn(
        `checkout started from ${framing.pageOrigin}, which may not frame the payment form (allowed: ${framing.allowedOrigins.join(', ')}): ` +
          `open the shop at ${this.#shopOrigin} (PUBLIC_URL), or add ${framing.pageOrigin} to SHOP_ALLOWED_ORIGINS`,
      );
    }
    return framing;
  }

  /** The origin of the form, which the checkout page may frame (its CSP `frame-src`). */
  get formOrigin(): string {
    return this.#formUrl.origin;
  }

  /**
   * What a create call adds so the embedded form can be framed by this shop's pages only: the origins the
   * render token encodes. `allowed_origins` is the simulator's field name (the reference does not
   * show how a render token is obtained).
   */
  intentParams(framing: CheckoutFraming = this.framingFor()): Record<string, unknown> {
    return { allowed_origins: framing.allowedOrigins };
  }

  forIntent(intent: PaymentIntent | SetupIntent, framing: CheckoutFraming = this.framingFor()): CheckoutSession {
    const embedToken = intent[CHECKOUT_TOKEN_FIELDS.embedToken];
    const renderToken = intent[CHECKOUT_TOKEN_FIELDS.renderToken];
    if (typeof embedToken !== 'string' || embedToken === '') {
      throw new CheckoutTokenMissingError(
        `the created intent ${intent.id} carries no ${CHECKOUT_TOKEN_FIELDS.embedToken}`,
      );
    }
    if (typeof renderToken !== 'string' || renderToken === '') {
      throw new CheckoutTokenMissingError(
        `the created intent ${intent.id} carries no ${CHECKOUT_TOKEN_FIELDS.renderToken}`,
      );
    }
    const formUrl = new URL(this.#formUrl);
    formUrl.searchParams.set('token', renderToken);
    const expiresAt = intent[CHECKOUT_TOKEN_FIELDS.embedTokenExpiresAt];
    return {
      formUrl: formUrl.toString(),
      formOrigin: formUrl.origin,
      embedToken,
      ...(typeof expiresAt === 'string' ? { embedTokenExpiresAt: expiresAt } : {}),
      frameAncestors: framing.allowedOrigins,
    };
  }
}
