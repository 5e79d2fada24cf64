import { PAYMENT_INTENT_STATES, SETUP_INTENT_STATES } from '../../client/payments-intent.states.js';
import type { RenderTokenClaims } from './render-token.codec.js';

/** Outcomes a confirm may choose for a payment intent: its documented states. */
export const PAYMENT_OUTCOMES = PAYMENT_INTENT_STATES;
/** Outcomes a confirm may choose for a setup intent: its documented states. */
export const SETUP_OUTCOMES = SETUP_INTENT_STATES;

/** Escapes JSON for a `<script type="application/json">` block. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

/** Options of `renderCheckoutPage`. */
export interface CheckoutPageOptions {
  /** Show the developer panel (every outcome, and Fail). The iframe URL asks for it with `&dev=1`. Default false. */
  devPanel?: boolean;
}

/**
 * `amount` in the smallest unit of `currency`, formatted with its symbol (1999 EUR: "€19.99"). The
 * reference shows no currency field: the simulator reads it from the intent's `metadata.currency`
 * (merchant-supplied), and without a valid ISO 4217 code shows the bare amount.
 */
export function formatMinorAmount(amount: number, currency: unknown, locale = 'en'): string {
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return String(amount);
  try {
    const format = new Intl.NumberFormat(locale, { style: 'currency', currency });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    return format.format(amount / 10 ** digits);
  } catch {
    return `${amount} ${currency}`;
  }
}

/** Escapes text for HTML content and attribute values. */
function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * The embedded checkout form ("the iframe"). It gets the embed token from the URL fragment
 * (`#embed_token=...`, never sent to a server) or from a `payments:embed_token` message of an allowed
 * parent origin; until then its buttons are disabled. They POST `confirm` with
 * `Authorization: Embed <token>`, then tell the parent `{ type: 'payments:confirm_result', state }`
 * (a UX signal only). The shopper sees the amount with its currency, a test-mode badge and one
 * plain sentence per result; the outcome chooser sits in a developer panel shown with `dev=1`.
 */
export function renderCheckoutPage(
  claims: RenderTokenClaims,
  intent: { amount?: unknown; metadata?: Record<string, unknown> | null },
  nonce: string,
  options: CheckoutPageOptions = {},
): string {
  const payment = claims.kind === 'payment_intent';
  const outcomes: readonly string[] = payment ? PAYMENT_OUTCOMES : SETUP_OUTCOMES;
  const config = { kind: claims.kind, intentId: claims.intentId, origins: claims.origins };
  const amount = typeof intent.amount === 'number' ? String(intent.amount) : '';
  const currency = intent.metadata?.['currency'];
  const money = typeof intent.amount === 'number' ? formatMinorAmount(intent.amount, currency) : '';
  const title = payment ? 'Pay by card' : 'Save a card';
  const select = outcomes.map((o) => `<option value="${o}">${o}</option>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Checkout (test mode)</title>
<style nonce="${nonce}">
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:14px 16px;color:#1f2328;background:#fff;font-size:15px}
.top{display:flex;justify-content:space-between;align-items:center;gap:8px;margin-bottom:10px}
.badge{font-size:11px;font-weight:700;letter-spacing:.04em;text-transform:uppercase;background:#fff8c5;color:#7d4e00;border:1px solid #d4a72c;border-radius:999px;padding:2px 8px;white-space:nowrap}
.brand{font-size:12px;color:#656d76}
h1{font-size:18px;margin:0 0 2px}
#amount{margin:0 0 12px;color:#656d76}
label{display:block;font-size:12px;color:#656d76;margin:8px 0 4px}
.field{display:block;box-sizing:border-box;width:100%;border:1px solid #d0d7de;border-radius:6px;padding:8px 10px;background:#f6f8fa;font:14px ui-monospace,monospace;color:#57606a}
.hint{font-size:11px;color:#8c959f;margin-top:4px}
.row{display:flex;gap:8px}.row>div{flex:1}
.actions{display:flex;gap:8px;margin-top:14px;align-items:center}
button{font:inherit;padding:9px 16px;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;cursor:pointer}
button.link{background:none;border-color:transparent;color:#57606a}
button:disabled{opacity:.5;cursor:default}
#status{margin-top:12px;min-height:1.3em;font-weight:600}
body[data-result="ok"] #status{color:#116329}
body[data-result="bad"] #status{color:#a40e26}
body[data-result="action"] #status{color:#7d4e00}
#dev-panel{margin-top:14px;border:1px dashed #d4a72c;border-radius:6px;padding:6px 10px;background:#fffdf0;font-size:13px}
#dev-panel button{padding:4px 10px;font-size:13px}
</style>
</head>
<body data-state="">
<div class="top"><span class="badge" id="test-mode">Test mode &middot; simulator</span><span class="brand">No real money moves</span></div>
<h1 id="title">${html(title)}</h1>
<p id="amount" data-amount="${amount}" data-currency="${typeof currency === 'string' ? html(currency) : ''}">${payment ? `Amount due: ${html(money)}` : 'Your card is kept for your next purchases.'}</p>
<label for="card-number">Card number</label><input class="field" id="card-number" inputmode="numeric" autocomplete="off" value="4242 4242 4242 4242">
<div class="hint">Test cards: 4242&nbsp;4242&nbsp;4242&nbsp;4242 is accepted, 4000&nbsp;0000&nbsp;0000&nbsp;0002 is declined${payment ? ', 4000&nbsp;0000&nbsp;0000&nbsp;3220 needs an extra step' : ''}.</div>
<div class="row"><div><label>Expiry</label><div class="field">12 / 34</div></div><div><label>CVC</label><div class="field">123</div></div></div>
<div class="actions">
<button id="pay" data-outcome="succeeded" disabled>${html(payment ? `Pay ${money}` : 'Save card')}</button>
<button id="cancel" class="link" data-outcome="cancelled" disabled>Cancel</button>
</div>
<p id="status" role="status">Loading&hellip;</p>
<details id="dev-panel"${options.devPanel ? ' open' : ' hidden'}>
<summary>Developer panel (simulator)</summary>
<p><button id="fail" data-outcome="${payment ? 'errored_authorization' : 'failed'}" disabled>Decline</button>
<select id="outcome">${select}</select> <button id="submit" disabled>Confirm with outcome</button></p>
</details>
<script type="application/json" id="config">${scriptJson(config)}</script>
<script nonce="${nonce}">
(function () {
  var config = JSON.parse(document.getElementById('config').textContent);
  var status = document.getElementById('status');
  var buttons = document.querySelectorAll('button');
  var fragment = new URLSearchParams(location.hash.slice(1));
  var embedToken = fragment.get('embed_token');
  var parentOrigin = null;
  var done = false;
  var payment = config.kind === 'payment_intent';
  // One plain sentence per result; the state name stays in data-state for scripts and tests.
  function sentence(state) {
    if (state === 'succeeded') return payment ? ['ok', 'Payment accepted.'] : ['ok', 'Card accepted.'];
    if (state === 'cancelled') return ['bad', payment ? 'Payment cancelled. Nothing was charged.' : 'Cancelled. No card was saved.'];
    if (state.indexOf('requires_') === 0) return ['action', 'Your bank needs one more step before this payment can complete.'];
    return ['bad', payment ? 'Your card was declined. Nothing was charged.' : 'The card could not be saved.'];
  }
  var ERRORS = {
    embed_token_used: 'This payment was already submitted.',
    embed_token_expired: 'This payment form has expired. Reload the page to start again.'
  };
  function enable(on) { buttons.forEach(function (b) { b.disabled = !on; }); }
  function ready() { if (!done) { enable(true); status.textContent = ''; } }
  if (embedToken) { history.replaceState(null, '', location.pathname + location.search); ready(); }
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
      ready();
    }
  });
  function confirm(outcome) {
    if (!embedToken || done) return;
    enable(false);
    status.textContent = payment ? 'Processing your payment\u2026' : 'Saving your card\u2026';
    fetch('confirm', {
      method: 'POST',
      headers: { 'Authorization': 'Embed ' + embedToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ outcome: outcome })
    }).then(function (res) {
      return res.json().then(function (body) { return { ok: res.ok, body: body }; });
    }).then(function (r) {
      done = true;
      if (r.ok) {
        var shown = sentence(r.body.state);
        document.body.setAttribute('data-state', r.body.state);
        document.body.setAttribute('data-result', shown[0]);
        status.textContent = shown[1];
        tell({ type: 'payments:confirm_result', state: r.body.state, intent_id: config.intentId });
      } else {
        var code = (r.body && r.body.error && r.body.error.code) || 'confirm_failed';
        document.body.setAttribute('data-state', 'error');
        document.body.setAttribute('data-result', 'bad');
        status.textContent = ERRORS[code] || 'The payment could not be submitted. Please reload the page and try again.';
        tell({ type: 'payments:confirm_result', error: code, intent_id: config.intentId });
      }
    }).catch(function () {
      status.textContent = 'Connection problem: please try again.';
      enable(true);
    });
  }
  // The simulator's test cards pick the outcome of Pay, as a sandbox's test card numbers do.
  var CARDS = payment
    ? { '4000000000000002': 'errored_authorization', '4000000000003220': 'requires_capture' }
    : { '4000000000000002': 'failed' };
  document.querySelectorAll('button[data-outcome]').forEach(function (b) {
    b.addEventListener('click', function () {
      var outcome = b.getAttribute('data-outcome');
      if (b.id === 'pay') outcome = CARDS[document.getElementById('card-number').value.replace(/\\D/g, '')] || outcome;
      confirm(outcome);
    });
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
