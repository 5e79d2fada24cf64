/**
 * The sample's checkout page: static HTML and a small inline script, no build step. It only talks to
 * this app (`POST /orders`, `GET /orders/:id`, and the setup counterparts) and to the embedded form
 * in the iframe; it never sees the API key.
 *
 * The flow, as the reference wants it:
 * 1. `POST /orders` answers the order and a checkout session (form URL with the render token as
 *    query parameter `token` [C1], the embed token, the form's origin).
 * 2. The page mounts the form in an iframe. When the form says `payments:ready`, the page posts it the
 *    embed token (`payments:embed_token`), to the form's origin only; the form confirms with
 *    `Authorization: Embed <token>` [C2].
 * 3. The form's `payments:confirm_result` is a UX signal only [C4]: the page shows "processing"...
 * 4. ...and polls `GET /orders/:id` until a verified webhook has moved the order, then shows that.
 *
 * The message names (`payments:ready`, `payments:embed_token`, `payments:confirm_result`) are the
 * local simulator's choice: the reference does not show the iframe's protocol.
 */
export function renderShopCheckoutPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sample shop: checkout</title>
<style nonce="${nonce}">
  body { font-family: system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1f2328; }
  main { max-width: 720px; margin: 32px auto; padding: 0 16px; }
  h1 { font-size: 1.6rem; margin-bottom: 4px; }
  .card { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 20px; margin: 16px 0; }
  .row { display: flex; justify-content: space-between; align-items: center; gap: 12px; }
  button { font: inherit; padding: 8px 16px; border-radius: 6px; border: 1px solid #1f6feb; background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1f6feb; }
  button:disabled { opacity: .5; cursor: default; }
  iframe { width: 100%; height: 300px; border: 1px solid #d0d7de; border-radius: 8px; margin-top: 12px; background: #fff; }
  .status { margin-top: 12px; padding: 10px 12px; border-radius: 6px; background: #f6f8fa; font-weight: 600; }
  .status[data-status="paid"], .status[data-status="saved"] { background: #dafbe1; color: #116329; }
  .status[data-status="failed"], .status[data-status="cancelled"] { background: #ffebe9; color: #a40e26; }
  .status[data-status="processing"] { background: #fff8c5; color: #7d4e00; }
  .muted { color: #656d76; font-size: .9rem; }
  ul.notes { margin: 8px 0 0; padding-left: 20px; color: #656d76; font-size: .9rem; }
  code { font-size: .85rem; }
</style>
</head>
<body>
<main>
  <h1>Sample shop</h1>
  <p class="muted">A merchant app built on <code>nestjs-payments</code>. Orders are marked paid only by verified webhooks.</p>

  <section class="card" id="order-section">
    <div class="row">
      <div><strong>Sample T-shirt</strong><div class="muted">19.99 EUR</div></div>
      <button id="buy">Buy</button>
    </div>
    <p class="muted" id="order-id"></p>
    <div id="order-frame"></div>
    <div class="status" id="order-status" data-status="idle" role="status">Press Buy to start.</div>
    <ul class="notes" id="order-notes"></ul>
  </section>

  <section class="card" id="setup-section">
    <div class="row">
      <div><strong>Save a card for later</strong><div class="muted">Uses a setup intent.</div></div>
      <button id="save-card" class="secondary">Save a card</button>
    </div>
    <div id="setup-frame"></div>
    <div class="status" id="setup-status" data-status="idle" role="status">No card saved yet.</div>
  </section>
</main>
<script nonce="${nonce}">
(function () {
  'use strict';
  var POLL_MS = 500;
  var POLL_LIMIT_MS = 120000;

  var LABELS = {
    order: {
      waiting: 'Waiting for your payment in the form above.',
      processing: 'Processing: waiting for the payment service to confirm your payment...',
      pending: 'Still waiting for the payment service. You can come back to this page later.',
      paid: 'Paid. Thank you, your order is on its way!',
      failed: 'The payment failed. Nothing was charged; please try again.',
      cancelled: 'This order was cancelled.'
    },
    setup: {
      waiting: 'Enter your card in the form above.',
      processing: 'Processing: waiting for the payment service to confirm...',
      pending: 'Still waiting for the payment service.',
      saved: 'Card saved for your next purchases.',
      failed: 'The card could not be saved.'
    }
  };

  function show(el, status, text) {
    el.setAttribute('data-status', status);
    el.textContent = text;
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

  /**
   * Mounts the embedded form for one checkout session, hands it the embed token, and polls the
   * server-side record until a webhook settles it. The confirm result only switches to "processing".
   */
  function runCheckout(opts) {
    var session = opts.checkout;
    var frame = document.createElement('iframe');
    frame.title = 'Payment form';
    frame.id = opts.kind + '-iframe';
    var confirmed = false;
    var settled = false;
    var started = Date.now();
    // Where the checkout stands, for people debugging and for the browser test:
    // mounted -> token-sent -> confirmed -> settled.
    function stage(name) { opts.sectionEl.setAttribute('data-stage', name); }

    function onMessage(event) {
      // Only the form we mounted, from its own origin.
      if (event.origin !== session.formOrigin || event.source !== frame.contentWindow) return;
      var data = event.data || {};
      if (data.type === 'payments:ready') {
        frame.contentWindow.postMessage({ type: 'payments:embed_token', embed_token: session.embedToken }, session.formOrigin);
        stage('token-sent');
      } else if (data.type === 'payments:confirm_result') {
        // [C4] a UX signal: the order is settled by the server when the webhook arrives.
        confirmed = true;
        stage('confirmed');
        if (!settled) show(opts.statusEl, 'processing', LABELS[opts.kind].processing);
      }
    }
    window.addEventListener('message', onMessage);

    function poll() {
      json('GET', opts.pollUrl).then(function (record) {
        if (opts.notesEl) {
          opts.notesEl.textContent = '';
          (record.notes || []).forEach(function (note) {
            var li = document.createElement('li');
            li.textContent = note;
            opts.notesEl.appendChild(li);
          });
        }
        if (record.status !== 'pending') {
          settled = true;
          stage('settled');
          window.removeEventListener('message', onMessage);
          show(opts.statusEl, record.status, LABELS[opts.kind][record.status] || record.status);
          opts.onSettled(record);
          return;
        }
        if (Date.now() - started > POLL_LIMIT_MS) {
          show(opts.statusEl, 'pending', LABELS[opts.kind].pending);
          return;
        }
        if (!confirmed) show(opts.statusEl, 'waiting', LABELS[opts.kind].waiting);
        setTimeout(poll, POLL_MS);
      }).catch(function () {
        setTimeout(poll, POLL_MS * 4);
      });
    }

    // [C1] the render token travels as query parameter 'token' of the form's URL (formUrl has it).
    frame.src = session.formUrl;
    opts.frameEl.textContent = '';
    opts.frameEl.appendChild(frame);
    stage('mounted');
    show(opts.statusEl, 'waiting', LABELS[opts.kind].waiting);
    poll();
  }

  var buy = document.getElementById('buy');
  buy.addEventListener('click', function () {
    buy.disabled = true;
    var statusEl = document.getElementById('order-status');
    show(statusEl, 'creating', 'Creating your order...');
    json('POST', '/orders', { amount: 1999, currency: 'EUR' }).then(function (created) {
      document.getElementById('order-id').textContent = 'Order ' + created.order.id;
      document.body.setAttribute('data-order-id', created.order.id);
      runCheckout({
        kind: 'order',
        checkout: created.checkout,
        pollUrl: '/orders/' + encodeURIComponent(created.order.id),
        sectionEl: document.getElementById('order-section'),
        frameEl: document.getElementById('order-frame'),
        statusEl: statusEl,
        notesEl: document.getElementById('order-notes'),
        onSettled: function () { buy.disabled = false; }
      });
    }).catch(function (error) {
      show(statusEl, 'failed', 'Could not create the order: ' + error.message);
      buy.disabled = false;
    });
  });

  var save = document.getElementById('save-card');
  save.addEventListener('click', function () {
    save.disabled = true;
    var statusEl = document.getElementById('setup-status');
    show(statusEl, 'creating', 'Starting...');
    json('POST', '/payment-methods/setup').then(function (created) {
      runCheckout({
        kind: 'setup',
        checkout: created.checkout,
        pollUrl: '/payment-methods/setup/' + encodeURIComponent(created.setup.id),
        sectionEl: document.getElementById('setup-section'),
        frameEl: document.getElementById('setup-frame'),
        statusEl: statusEl,
        notesEl: null,
        onSettled: function () { save.disabled = false; }
      });
    }).catch(function (error) {
      show(statusEl, 'failed', 'Could not start: ' + error.message);
      save.disabled = false;
    });
  });
})();
</script>
</body>
</html>`;
}
