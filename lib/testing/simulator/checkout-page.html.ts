import type { RenderTokenClaims } from './render-token.codec.js';

/** Outcomes a confirm may choose, per intent kind (the states the reference signals). */
export const PAYMENT_OUTCOMES = [
  'succeeded',
  'cancelled',
  'errored_authorization',
  'errored_capture',
  'errored_sale',
  'requires_payment_method',
  'requires_confirmation',
  'requires_capture',
  'requires_review',
] as const;
export const SETUP_OUTCOMES = ['succeeded', 'failed', 'errored', 'cancelled'] as const;

/** Escapes JSON for a `<script type="application/json">` block. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

/**
 * The embedded checkout form ("the iframe"). It gets the embed token from the URL fragment
 * (`#embed_token=...`, never sent to a server) or from a `payments:embed_token` message of an allowed
 * parent origin; its buttons POST `confirm` with `Authorization: Embed <token>`, then tell the parent
 * `{ type: 'payments:confirm_result', state }` (a UX signal only).
 */
export function renderCheckoutPage(claims: RenderTokenClaims, intent: { amount?: unknown }, nonce: string): string {
  const payment = claims.kind === 'payment_intent';
  const outcomes: readonly string[] = payment ? PAYMENT_OUTCOMES : SETUP_OUTCOMES;
  const config = { kind: claims.kind, intentId: claims.intentId, origins: claims.origins };
  const amount = typeof intent.amount === 'number' ? String(intent.amount) : '';
  const title = payment ? `Pay ${amount}` : 'Save your card';
  const options = outcomes.map((o) => `<option value="${o}">${o}</option>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Checkout (simulator)</title>
<style nonce="${nonce}">
body{font-family:system-ui,sans-serif;margin:16px;color:#222}
button{margin:4px 4px 4px 0;padding:8px 14px}
#status{margin-top:12px;min-height:1.2em}
</style>
</head>
<body data-state="">
<h1 id="title">${title}</h1>
<p id="amount" data-amount="${amount}">${payment ? `Amount: ${amount}` : 'The card is saved for later payments.'}</p>
<button id="pay" data-outcome="succeeded">${payment ? 'Pay' : 'Save card'}</button>
<button id="fail" data-outcome="${payment ? 'errored_authorization' : 'failed'}">Fail</button>
<button id="cancel" data-outcome="cancelled">Cancel</button>
<p><select id="outcome">${options}</select> <button id="submit">Confirm with outcome</button></p>
<p id="status" role="status"></p>
<script type="application/json" id="config">${scriptJson(config)}</script>
<script nonce="${nonce}">
(function () {
  var config = JSON.parse(document.getElementById('config').textContent);
  var status = document.getElementById('status');
  var fragment = new URLSearchParams(location.hash.slice(1));
  var embedToken = fragment.get('embed_token');
  var parentOrigin = null;
  if (embedToken) history.replaceState(null, '', location.pathname + location.search);
  function allowed(origin) { return config.origins.indexOf('*') >= 0 || config.origins.indexOf(origin) >= 0; }
  function target() {
    if (parentOrigin) return parentOrigin;
    var named = config.origins.filter(function (o) { return o !== '*'; });
    return named.length === 1 ? named[0] : '*';
  }
  function tell(message) { if (window.parent !== window) window.parent.postMessage(message, target()); }
  window.addEventListener('message', function (event) {
    if (event.source !== window.parent || !allowed(event.origin)) return;
    var data = event.data || {};
    if (data.type === 'payments:embed_token' && typeof data.embed_token === 'string') {
      embedToken = data.embed_token;
      parentOrigin = event.origin;
      status.textContent = '';
    }
  });
  function confirm(outcome) {
    if (!embedToken) { status.textContent = 'No embed token yet.'; return; }
    var buttons = document.querySelectorAll('button');
    buttons.forEach(function (b) { b.disabled = true; });
    status.textContent = 'Confirming...';
    fetch('confirm', {
      method: 'POST',
      headers: { 'Authorization': 'Embed ' + embedToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ outcome: outcome })
    }).then(function (res) {
      return res.json().then(function (body) { return { ok: res.ok, body: body }; });
    }).then(function (r) {
      if (r.ok) {
        document.body.setAttribute('data-state', r.body.state);
        status.textContent = 'Result: ' + r.body.state;
        tell({ type: 'payments:confirm_result', state: r.body.state, intent_id: config.intentId });
      } else {
        var code = (r.body && r.body.error && r.body.error.code) || 'confirm_failed';
        document.body.setAttribute('data-state', 'error');
        status.textContent = 'Error: ' + code;
        tell({ type: 'payments:confirm_result', error: code, intent_id: config.intentId });
      }
    }).catch(function () {
      status.textContent = 'Network error';
      buttons.forEach(function (b) { b.disabled = false; });
    });
  }
  document.querySelectorAll('button[data-outcome]').forEach(function (b) {
    b.addEventListener('click', function () { confirm(b.getAttribute('data-outcome')); });
  });
  document.getElementById('submit').addEventListener('click', function () {
    confirm(document.getElementById('outcome').value);
  });
  tell({ type: 'payments:ready', intent_id: config.intentId });
})();
</script>
</body>
</html>`;
}
