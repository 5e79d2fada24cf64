import { Body, Controller, Get, Header, HttpCode, Logger, Post, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import type { SampleConfig } from '../sample.config.js';
import { renderShopCheckoutPage, type ShopPageSettings } from './checkout-page.html.js';
import { CheckoutSessionFactory } from './checkout-session.factory.js';

/** The smallest part of an HTTP response this controller needs (Express and Fastify both fit). */
interface HtmlResponse {
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
}

/** The product the sample sells (one, to keep the page small). */
const PRODUCT = { name: 'Organic cotton T-shirt', description: 'Size M, navy. Ships in 2 days.', amount: 1999 };

/** At most this many distinct page origins get a log line about a form that did not load. */
const MAX_REPORTED_ORIGINS = 50;

/**
 * `GET /`: the checkout page. A fresh nonce per response lets the inline script and style run under
 * a strict Content-Security-Policy that frames only the payment form's origin.
 * `POST /checkout/form-load-failed`: the page's report that the form did not load, so that the
 * server's log names the fix too (warn level, once per page origin, nothing secret).
 */
@Controller()
export class CheckoutPageController {
  private readonly logger = new Logger('Checkout');
  readonly #reportedOrigins = new Set<string>();
  readonly #settings: ShopPageSettings;

  constructor(
    private readonly checkout: CheckoutSessionFactory,
    config: ConfigService,
  ) {
    const sample = config.getOrThrow<SampleConfig>('sample');
    this.#settings = {
      product: { ...PRODUCT, currency: sample.shop.defaultCurrency },
      testMode: sample.embeddedSimulator
        ? 'simulator'
        : sample.payments.environment === 'sandbox'
          ? 'sandbox'
          : undefined,
      devPanel: sample.shop.devPanel,
      formLoadTimeoutMs: sample.checkout.formLoadTimeoutMs,
      publicOrigin: new URL(sample.publicUrl).origin,
    };
  }

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  page(@Res({ passthrough: true }) res: HtmlResponse): string {
    const nonce = randomBytes(16).toString('base64');
    const csp = [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "connect-src 'self'",
      `frame-src ${this.checkout.formOrigin}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
    if (res.setHeader) res.setHeader('Content-Security-Policy', csp);
    else res.header?.('Content-Security-Policy', csp);
    return renderShopCheckoutPage(nonce, this.#settings);
  }

  @Post('checkout/form-load-failed')
  @HttpCode(204)
  formLoadFailed(@Body() body: unknown): void {
    const value = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const origin =
      typeof value['origin'] === 'string' && /^https?:\/\/[A-Za-z0-9.\-[\]:]{1,200}$/.test(value['origin'])
        ? value['origin']
        : undefined;
    const reason =
      value['reason'] === 'origin-not-allowed' ? 'is not allowed to frame it' : 'did not receive it in time';
    if (origin === undefined || this.#reportedOrigins.has(origin) || this.#reportedOrigins.size >= MAX_REPORTED_ORIGINS)
      return;
    this.#reportedOrigins.add(origin);
    this.logger.warn(
      `the payment form did not load for a page at ${origin} (the page ${reason}): open the shop at ${this.#settings.publicOrigin} (PUBLIC_URL), ` +
        `add ${origin} to SHOP_ALLOWED_ORIGINS, and check that PAYMENTS_CHECKOUT_URL (${this.checkout.formOrigin}) is reachable`,
    );
  }
}
