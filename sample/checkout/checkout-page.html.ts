/** What the server tells the checkout page (rendered into it as JSON; nothing secret). */
export interface ShopPageSettings {
  /** The product the page sells, in the smallest unit of `currency`. */
  product: { name: string; description: string; amount: number; currency: string };
  /** 'simulator' (the embedded local simulator) or 'sandbox' show a test-mode badge; undefined shows none. */
  testMode: 'simulator' | 'sandbox' | undefined;
  /** Developer panel for everyone (`SHOP_DEV_PANEL=true`); else only with `?dev=1`. */
  devPanel: boolean;
  /** How long to wait for the payment form before saying what to fix, in ms. */
  formLoadTimeoutMs: number;
  /** PUBLIC_URL's origin, named in the fix when the page is opened elsewhere. */
  publicOrigin: string;
}

/** Escapes JSON for a `<script type="application/json">` block. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

/**
 * The sample's checkout page: static HTML and a small inline script, no build step. It only talks to
 * this app (`POST /orders`, `GET /orders/:id`, `POST /orders/:id/cancel`, and the setup counterparts)
 * and to the embedded form in the iframe; it never sees the API key.
 *
 * The flow, as the reference wants it:
 * 1. `POST /orders` answers the order and a checkout session (form URL with the render token as
 *    query parameter `token` [C1], the embed token, the form's origin, the origins allowed to frame it).
 * 2. The page mounts the form in an iframe. When the form says `payments:ready`, the page posts it the
 *    embed token (`payments:embed_token`), to the form's origin only; the form confirms with
 *    `Authorization: Embed <token>` [C2]. If the form never says it is ready (blocked by
 *    `frame-ancestors`, service unreachable), the page says so within `formLoadTimeoutMs`, naming the fix.
 * 3. The form's `payments:confirm_result` is a UX signal only [C4]: the page shows "processing"...
 * 4. ...and polls `GET /orders/:id` until a verified webhook has settled the order, then shows one
 *    message per outcome: paid, failed, cancelled, or needs action (with a button to cancel the order).
 *
 * The shopper's view shows no ids and no state names; the developer panel (`?dev=1`) shows the order
 * id, the events' notes, and the simulator's outcome chooser inside the form.
 *
 * The message names (`payments:ready`, `payments:embed_token`, `payments:confirm_result`) are the
 * local simulator's choice: the reference does not show the iframe's protocol.
 */
export function renderShopCheckoutPage(nonce: string, settings: ShopPageSettings): string {
  const badge =
    settings.testMode === undefined
      ? ''
      : `<span class="badge" id="test-mode">Test mode &middot; ${settings.testMode === 'simulator' ? 'local simulator' : 'sandbox'}</span>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sample shop: checkout</title>
<style nonce="${nonce}">
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; background: #f4f5f7; color: #1f2328; }
  header { background: #fff; border-bottom: 1px solid #d0d7de; }
  header .bar { max-width: 720px; margin: 0 auto; padding: 14px 16px; display: flex; align-items: center; justify-content: space-between; gap: 8px; }
  .logo { font-weight: 800; font-size: 1.2rem; letter-spacing: -.01em; margin: 0; }
  .badge { font-size: .72rem; font-weight: 700; letter-spacing: .04em; text-transform: uppercase; background: #fff8c5; color: #7d4e00; border: 1px solid #d4a72c; border-radius: 999px; padding: 3px 10px; white-space: nowrap; }
  main { max-width: 720px; margin: 24px auto; padding: 0 16px; }
  .card { background: #fff; border: 1px solid #d0d7de; border-radius: 12px; padding: 20px; margin: 16px 0; }
  .product { display: flex; gap: 16px; align-items: center; }
  .thumb { width: 72px; height: 72px; border-radius: 10px; background: linear-gradient(135deg, #1f6feb, #8250df); color: #fff; display: flex; align-items: center; justify-content: center; font-weight: 800; font-size: 1.6rem; flex: none; }
  .grow { flex: 1; }
  .name { font-weight: 700; font-size: 1.05rem; }
  .price { font-size: 1.15rem; font-weight: 700; margin-top: 4px; }
  button { font: inherit; padding: 9px 18px; border-radius: 6px; border: 1px solid #1f6feb; background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1f6feb; }
  button.danger { background: #fff; color: #a40e26; border-color: #a40e26; }
  button:disabled { opacity: .5; cursor: default; }
  iframe { width: 100%; height: 330px; border: 1px solid #d0d7de; border-radius: 8px; margin-top: 14px; background: #fff; }
  .status { margin-top: 14px; padding: 12px 14px; border-radius: 8px; background: #f6f8fa; font-weight: 600; line-height: 1.4; }
  .status[data-status="idle"] { display: none; }
  .status[data-status="paid"], .status[data-status="saved"] { background: #dafbe1; color: #116329; }
  .status[data-status="failed"], .status[data-status="form-error"] { background: #ffebe9; color: #a40e26; }
  .status[data-status="cancelled"] { background: #eaeef2; color: #32383f; }
  .status[data-status="action"], .status[data-status="processing"], .status[data-status="pending"] { background: #fff8c5; color: #7d4e00; }
  .status .more { display: block; font-weight: 400; margin-top: 4px; }
  .status code { font-size: .85rem; }
  .status button { margin-top: 10px; }
  .muted { color: #656d76; font-size: .9rem; }
  #dev-panel { border: 1px dashed #d4a72c; background: #fffdf0; font-size: .88rem; }
  #dev-panel h2 { font-size: .95rem; margin: 0 0 6px; }
  #dev-panel ul { margin: 6px 0 0; padding-left: 18px; color: #57606a; }
  footer { max-width: 720px; margin: 0 auto 32px; padding: 0 16px; }
</style>
</head>
<body>
<header><div class="bar"><h1 class="logo">Sample shop</h1>${badge}</div></header>
<main>
  <section class="card" id="order-section">
    <div class="product">
      <div class="thumb" aria-hidden="true">T</div>
      <div class="grow">
        <div class="name" id="product-name"></div>
        <div class="muted" id="product-description"></div>
        <div class="price" id="price"></div>
      </div>
      <button id="buy">Buy now</button>
    </div>
    <div id="order-frame"></div>
    <div class="status" id="order-status" data-status="idle" role="status"></div>
  </section>

  <section class="card" id="setup-section">
    <div class="product">
      <div class="grow"><div class="name">Save a card for later</div><div class="muted">Pay faster next time. Nothing is charged now.</div></div>
      <button id="save-card" class="secondary">Save a card</button>
    </div>
    <div id="setup-frame"></div>
    <div class="status" id="setup-status" data-status="idle" role="status"></div>
  </section>

  <section class="card" id="dev-panel" hidden>
    <h2>Developer panel</h2>
    <div class="muted">Shown because of <code>?dev=1</code> or <code>SHOP_DEV_PANEL=true</code>. The payment form shows its outcome chooser too. Operator view: <a href="/admin">/admin</a>.</div>
    <div id="dev-order"></div>
    <ul id="order-notes"></ul>
  </section>
</main>
<footer class="muted">Orders are marked paid only by verified webhooks (<code>nestjs-payments</code>).</footer>
<script type="application/json" id="settings">${scriptJson(settings)}</script>
<script nonce="${nonce}">
(function () {
  'use strict';
  var settings = JSON.parse(document.getElementById('settings').textContent);
  var POLL_MS = 400;
  var POLL_LIMIT_MS = 120000;
  var dev = settings.devPanel || new URLSearchParams(location.search).get('dev') === '1';
  if (dev) document.getElementById('dev-panel').hidden = false;

  function money(amount, currency) {
    try {
      var format = new Intl.NumberFormat('en', { style: 'currency', currency: currency });
      return format.format(amount / Math.pow(10, format.resolvedOptions().maximumFractionDigits));
    } catch (e) {
      return amount + ' ' + currency;
    }
  }
  var product = settings.product;
  var price = money(product.amount, product.currency);
  document.getElementById('product-name').textContent = product.name;
  document.getElementById('product-description').textContent = product.description;
  document.getElementById('price').textContent = price;

  var TEXT = {
    order: {
      waiting: ['Enter your card in the secure form above.'],
      processing: ['Confirming your payment with the bank\\u2026'],
      pending: ['Still waiting for the payment service.', 'You can leave this page: we will email you when the payment completes.'],
      paid: ['Payment received. Thank you!', 'Your order is on its way.'],
      failed: ['Your payment was declined.', 'Nothing was charged. You can try again with another card.'],
      cancelled: ['Payment cancelled.', 'Your order was cancelled and nothing was charged.'],
      action: ['Your payment needs one more step.', 'The bank or the shop must approve it before it completes. If you no longer want the order, cancel it.']
    },
    setup: {
      waiting: ['Enter your card in the secure form above.'],
      processing: ['Saving your card\\u2026'],
      pending: ['Still waiting for the payment service.'],
      saved: ['Card saved for your next purchases.'],
      failed: ['The card could not be saved.', 'Nothing was charged. You can try another card.']
    }
  };

  function show(el, status, lines, extra) {
    el.setAttribute('data-status', status);
    el.textContent = '';
    var strong = document.createElement('span');
    strong.textContent = lines[0];
    el.appendChild(strong);
    if (lines[1]) {
      var more = document.createElement('span');
      more.className = 'more';
      more.textContent = lines[1];
      el.appendChild(more);
    }
    if (extra) el.appendChild(extra);
  }

  function json(method, url, body) {
    return fetch(url, {
      method: method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined
    }).then(function (res) {
      return res.json().then(function (data) {
        if (!res.ok) throw new Error((data && data.message) || ('HTTP ' + res.status));
        return data;
      });
    });
  }

  /** What to fix when the form cannot load here: this page's address, PUBLIC_URL, SHOP_ALLOWED_ORIGINS. */
  function formError(session, blocked) {
    var here = location.origin;
    var head = blocked
      ? 'The payment form cannot be shown at this address (' + here + ').'
      : 'The payment form did not load within ' + Math.round(settings.formLoadTimeoutMs / 1000) + ' seconds.';
    var fix = blocked
      ? 'Open the shop at ' + settings.publicOrigin + ' (PUBLIC_URL), or add ' + here + ' to SHOP_ALLOWED_ORIGINS and restart the app.'
      : 'Check that the payment form at ' + session.formOrigin + ' (PAYMENTS_CHECKOUT_URL) is reachable, and that this address (' + here +
        ') is PUBLIC_URL or listed in SHOP_ALLOWED_ORIGINS.';
    // Tell the server too, so its log says what went wrong (warn level, nothing secret).
    fetch('/checkout/form-load-failed', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ origin: here, reason: blocked ? 'origin-not-allowed' : 'timeout' })
    }).catch(function () {});
    return [head, fix];
  }

  /**
   * Mounts the embedded form for one checkout session, hands it the embed token, and polls the
   * server-side record until a webhook settles it. The confirm result only switches to "processing".
   */
  var current = { order: 0, setup: 0 };
  function runCheckout(opts) {
    var session = opts.checkout;
    // A newer checkout of the same kind takes over the status line; this one stops polling.
    var generation = ++current[opts.kind];
    function superseded() { return current[opts.kind] !== generation; }
    var frame = document.createElement('iframe');
    frame.title = 'Secure payment form';
    frame.id = opts.kind + '-iframe';
    var ready = false;
    var confirmed = false;
    var settled = false;
    var failedToLoad = false;
    var started = Date.now();
    // Where the checkout stands, for people debugging and for the browser test:
    // mounted -> token-sent -> confirmed -> settled (or form-error).
    function stage(name) { opts.sectionEl.setAttribute('data-stage', name); }
    function finish() {
      window.removeEventListener('message', onMessage);
      opts.onSettled();
    }

    function onMessage(event) {
      // Only the form we mounted, from its own origin.
      if (event.origin !== session.formOrigin || event.source !== frame.contentWindow) return;
      var data = event.data || {};
      if (data.type === 'payments:ready') {
        ready = true;
        frame.contentWindow.postMessage({ type: 'payments:embed_token', embed_token: session.embedToken }, session.formOrigin);
        stage('token-sent');
      } else if (data.type === 'payments:confirm_result') {
        // [C4] a UX signal: the order is settled by the server when the webhook arrives.
        confirmed = true;
        stage('confirmed');
        if (!settled) show(opts.statusEl, 'processing', TEXT[opts.kind].processing);
      }
    }
    window.addEventListener('message', onMessage);

    function failLoad(blocked) {
      if (ready || settled || failedToLoad || superseded()) return;
      failedToLoad = true;
      stage('form-error');
      frame.remove();
      show(opts.statusEl, 'form-error', formError(session, blocked));
      finish();
    }

    function cancelButton(orderId) {
      var button = document.createElement('button');
      button.id = 'cancel-order';
      button.className = 'danger';
      button.textContent = 'Cancel order';
      button.addEventListener('click', function () {
        button.disabled = true;
        json('POST', '/orders/' + encodeURIComponent(orderId) + '/cancel').then(function () {
          poll();
        }).catch(function () { button.disabled = false; poll(); });
      });
      var wrap = document.createElement('div');
      wrap.appendChild(button);
      return wrap;
    }

    var actionShown = false;
    function poll() {
      if (failedToLoad || superseded()) return;
      json('GET', opts.pollUrl).then(function (record) {
        if (failedToLoad || superseded()) return;
        if (dev && opts.kind === 'order') {
          var notes = document.getElementById('order-notes');
          notes.textContent = '';
          (record.notes || []).forEach(function (note) {
            var li = document.createElement('li');
            li.textContent = note;
            notes.appendChild(li);
          });
        }
        if (record.status !== 'pending') {
          if (settled) return;
          settled = true;
          stage('settled');
          frame.remove();
          show(opts.statusEl, record.status, TEXT[opts.kind][record.status] || TEXT[opts.kind].pending);
          finish();
          return;
        }
        if (record.action && !actionShown) {
          // Not final: a later event may still settle it, so keep polling.
          actionShown = true;
          stage('action');
          frame.remove();
          show(opts.statusEl, 'action', TEXT.order.action, cancelButton(record.id));
          // The shopper may start another order meanwhile.
          opts.onSettled();
        }
        if (Date.now() - started > POLL_LIMIT_MS) {
          if (!actionShown) show(opts.statusEl, 'pending', TEXT[opts.kind].pending);
          finish();
          return;
        }
        if (actionShown) {
          // Waiting for the bank or the merchant: look less often.
          setTimeout(poll, POLL_MS * 5);
          return;
        }
        if (!confirmed && !actionShown) show(opts.statusEl, 'waiting', TEXT[opts.kind].waiting);
        setTimeout(poll, POLL_MS);
      }).catch(function () {
        setTimeout(poll, POLL_MS * 4);
      });
    }

    // [C1] the render token travels as query parameter 'token' of the form's URL (formUrl has it).
    frame.src = session.formUrl + (dev ? '&dev=1' : '');
    opts.frameEl.textContent = '';
    if ((session.frameAncestors || []).indexOf(location.origin) < 0 && (session.frameAncestors || []).indexOf('*') < 0) {
      // The form would refuse to load here: say so now rather than after the timeout.
      failLoad(true);
      return;
    }
    opts.frameEl.appendChild(frame);
    stage('mounted');
    show(opts.statusEl, 'waiting', TEXT[opts.kind].waiting);
    setTimeout(function () { failLoad(false); }, settings.formLoadTimeoutMs);
    poll();
  }

  var buy = document.getElementById('buy');
  buy.addEventListener('click', function () {
    buy.disabled = true;
    var statusEl = document.getElementById('order-status');
    show(statusEl, 'processing', ['Preparing your order\\u2026']);
    json('POST', '/orders', { amount: product.amount, currency: product.currency }).then(function (created) {
      document.body.setAttribute('data-order-id', created.order.id);
      if (dev) document.getElementById('dev-order').textContent = 'Order ' + created.order.id;
      runCheckout({
        kind: 'order',
        checkout: created.checkout,
        pollUrl: '/orders/' + encodeURIComponent(created.order.id),
        sectionEl: document.getElementById('order-section'),
        frameEl: document.getElementById('order-frame'),
        statusEl: statusEl,
        onSettled: function () { buy.disabled = false; buy.textContent = 'Buy again'; }
      });
    }).catch(function () {
      show(statusEl, 'failed', ['We could not start the payment.', 'The payment service did not answer. Please try again in a moment.']);
      buy.disabled = false;
    });
  });

  var save = document.getElementById('save-card');
  save.addEventListener('click', function () {
    save.disabled = true;
    var statusEl = document.getElementById('setup-status');
    show(statusEl, 'processing', ['Preparing the form\\u2026']);
    json('POST', '/payment-methods/setup').then(function (created) {
      runCheckout({
        kind: 'setup',
        checkout: created.checkout,
        pollUrl: '/payment-methods/setup/' + encodeURIComponent(created.setup.id),
        sectionEl: document.getElementById('setup-section'),
        frameEl: document.getElementById('setup-frame'),
        statusEl: statusEl,
        onSettled: function () { save.disabled = false; }
      });
    }).catch(function () {
      show(statusEl, 'failed', ['We could not start saving a card.', 'The payment service did not answer. Please try again in a moment.']);
      save.disabled = false;
    });
  });
})();
</script>
</body>
</html>`;
}
