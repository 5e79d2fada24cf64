/** The address the shop page was opened at, as the browser's request to this app shows it. */
export interface PageAddress {
  /** The request's `Origin` header (browsers send it on `fetch` POSTs). */
  origin?: string | undefined;
  /** The request's `Host` header. */
  host?: string | undefined;
}

/** Who may frame the payment form for one checkout, and whether the page asking is one of them. */
export interface CheckoutFraming {
  /** Origins the render token allows to frame the form (its CSP `frame-ancestors`). */
  allowedOrigins: string[];
  /** The origin the page was opened at, when the request shows it. */
  pageOrigin: string | undefined;
  /** False when the page's origin is not allowed: the form will refuse to load there. */
  pageAllowed: boolean;
}

/** `value` as an http(s) origin, or undefined. */
function asOrigin(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || value === 'null') return undefined;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decides the frame ancestors of one checkout:
 * - with `configured` origins (`SHOP_ALLOWED_ORIGINS`): those and PUBLIC_URL's, nothing else;
 * - without: PUBLIC_URL's and the origin the page was opened at, so `http://127.0.0.1:3000`, a LAN
 *   address or a forwarded port work without configuration. That origin is taken from the request's
 *   `Origin` header only when its host is the request's `Host` (the page and this app share an
 *   address); behind a proxy that rewrites `Host`, configure `SHOP_ALLOWED_ORIGINS` instead.
 */
export function resolveCheckoutFraming(
  publicOrigin: string,
  configured: readonly string[],
  page: PageAddress = {},
): CheckoutFraming {
  const claimed = asOrigin(page.origin);
  const sameHost =
    claimed !== undefined && page.host !== undefined && new URL(claimed).host === page.host.toLowerCase();
  if (configured.length > 0) {
    const allowedOrigins = [...new Set([...configured, publicOrigin])];
    return {
      allowedOrigins,
      pageOrigin: claimed,
      pageAllowed: claimed === undefined || allowedOrigins.includes(claimed),
    };
  }
  if (claimed === undefined) return { allowedOrigins: [publicOrigin], pageOrigin: undefined, pageAllowed: true };
  const allowedOrigins = sameHost ? [...new Set([publicOrigin, claimed])] : [publicOrigin];
  return { allowedOrigins, pageOrigin: claimed, pageAllowed: allowedOrigins.includes(claimed) };
}
