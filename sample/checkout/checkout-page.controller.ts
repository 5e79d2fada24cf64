import { Controller, Get, Header, Res } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { renderShopCheckoutPage } from './checkout-page.html.js';
import { CheckoutSessionFactory } from './checkout-session.factory.js';

/** The smallest part of an HTTP response this controller needs (Express and Fastify both fit). */
interface HtmlResponse {
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
}

/**
 * `GET /`: the checkout page. A fresh nonce per response lets the inline script and style run under
 * a strict Content-Security-Policy that frames only the payment form's origin.
 */
@Controller()
export class CheckoutPageController {
  constructor(private readonly checkout: CheckoutSessionFactory) {}

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
    return renderShopCheckoutPage(nonce);
  }
}
