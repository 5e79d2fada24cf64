/**
 * The operator view: a static page and a small inline script, no build step. It holds no data itself:
 * it asks for the admin token (`SHOP_ADMIN_TOKEN`), keeps it in this tab's sessionStorage, and reads
 * `GET /admin/api/overview` with `Authorization: Bearer <token>` every few seconds. It shows recent
 * deliveries (answer, handler runs and failures), duplicates dropped, the orders, and in queue mode
 * the failed set with a Replay button per event.
 */
export function renderAdminPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sample shop: operator view</title>
<style nonce="${nonce}">
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; background: #f4f5f7; color: #1f2328; font-size: 14px; }
  header { background: #24292f; color: #fff; }
  header .bar { max-width: 1100px; margin: 0 auto; padding: 12px 16px; display: flex; align-items: center; gap: 12px; }
  header h1 { font-size: 1.05rem; margin: 0; flex: 1; }
  .badge { font-size: .7rem; font-weight: 700; letter-spacing: .04em; text-transform: uppercase; background: #fff8c5; color: #7d4e00; border-radius: 999px; padding: 2px 9px; white-space: nowrap; }
  main { max-width: 1100px; margin: 18px auto; padding: 0 16px; }
  .card { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 14px 16px; margin: 14px 0; overflow-x: auto; } /* wide tables scroll inside their card */
  .card h2 { font-size: .95rem; margin: 0 0 8px; }
  .tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(100px, 1fr)); gap: 10px; } /* 6 across, fewer on a phone */
  .tile { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 10px 12px; }
  .tile .n { font-size: 1.5rem; font-weight: 700; }
  .tile .l { color: #656d76; font-size: .8rem; }
  table { width: 100%; border-collapse: collapse; }
  th, td { text-align: left; padding: 6px 8px; border-top: 1px solid #eaeef2; vertical-align: top; }
  th { font-size: .75rem; text-transform: uppercase; letter-spacing: .03em; color: #656d76; border-top: 0; }
  code { font-size: .8rem; color: #57606a; }
  .pill { display: inline-block; border-radius: 999px; padding: 1px 8px; font-size: .75rem; font-weight: 600; background: #eaeef2; }
  .ok { background: #dafbe1; color: #116329; } .bad { background: #ffebe9; color: #a40e26; } .warn { background: #fff8c5; color: #7d4e00; }
  .handlers { margin: 0; padding: 0; list-style: none; }
  .err { color: #a40e26; font-size: .8rem; }
  .muted { color: #656d76; }
  button { font: inherit; padding: 5px 12px; border-radius: 6px; border: 1px solid #1f6feb; background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1f6feb; }
  button:disabled { opacity: .5; cursor: default; }
  input { font: inherit; padding: 6px 8px; border: 1px solid #d0d7de; border-radius: 6px; width: 320px; max-width: 100%; box-sizing: border-box; }
  #message { min-height: 1.2em; }
</style>
</head>
<body>
<header><div class="bar"><h1>Sample shop &middot; operator view</h1><span class="badge">Test mode</span><button id="refresh" class="secondary" hidden>Refresh</button><button id="sign-out" class="secondary" hidden>Sign out</button></div></header>
<main>
  <section class="card" id="sign-in-card" hidden>
    <h2>Sign in</h2>
    <p class="muted">This page is protected by the shop's admin token (<code>SHOP_ADMIN_TOKEN</code>). It is kept in this tab only and sent as <code>Authorization: Bearer</code>.</p>
    <input id="token" type="password" autocomplete="off" placeholder="Admin token"> <button id="sign-in">Sign in</button>
    <p class="err" id="sign-in-error"></p>
  </section>
  <div id="view" hidden>
    <p class="muted" id="mode"></p>
    <div class="tiles">
      <div class="tile"><div class="n" id="t-deliveries">0</div><div class="l">Verified deliveries</div></div>
      <div class="tile"><div class="n" id="t-runs">0</div><div class="l">Handler runs</div></div>
      <div class="tile"><div class="n" id="t-failures">0</div><div class="l">Handler failures</div></div>
      <div class="tile"><div class="n" id="t-duplicates">0</div><div class="l">Duplicates dropped</div></div>
      <div class="tile"><div class="n" id="t-rejected">0</div><div class="l">Refused deliveries</div></div>
      <div class="tile"><div class="n" id="t-failed">&ndash;</div><div class="l">Failed set (queue)</div></div>
    </div>
    <section class="card" id="failed-card">
      <h2>Failed events</h2>
      <p class="muted" id="failed-note"></p>
      <table id="failed-table"><thead><tr><th>Event</th><th>Id</th><th>Why</th><th>Attempts</th><th>Failed at</th><th></th></tr></thead><tbody></tbody></table>
      <p id="message" role="status"></p>
    </section>
    <section class="card">
      <h2>Recent deliveries</h2>
      <table id="deliveries"><thead><tr><th>Last seen</th><th>Event</th><th>Id</th><th>Answer</th><th>Handlers (last run)</th><th>Deliveries / runs</th></tr></thead><tbody></tbody></table>
    </section>
    <section class="card" id="rejections-card" hidden>
      <h2>Refused deliveries</h2>
      <p class="muted">Refused before anything in them was trusted: nothing of the request is kept. Many <code>invalid_signature</code> answers usually mean a wrong or rotated webhook secret.</p>
      <table id="rejections"><thead><tr><th>At</th><th>Answer</th><th>Reason</th></tr></thead><tbody></tbody></table>
    </section>
    <section class="card">
      <h2>Orders</h2>
      <table id="orders"><thead><tr><th>Created</th><th>Order</th><th>Amount</th><th>Status</th><th></th></tr></thead><tbody></tbody></table>
    </section>
  </div>
</main>
<script nonce="${nonce}">
(function () {
  'use strict';
  var KEY = 'sample-shop-admin-token';
  var token = sessionStorage.getItem(KEY);
  var timer = null;
  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  function time(iso) { return iso ? new Date(iso).toLocaleTimeString('en-GB') : ''; }
  function short(id) { return id ? id.slice(0, 8) : ''; }
  function money(amount, currency) {
    try {
      var f = new Intl.NumberFormat('en', { style: 'currency', currency: currency });
      return f.format(amount / Math.pow(10, f.resolvedOptions().maximumFractionDigits));
    } catch (e) { return amount + ' ' + currency; }
  }
  function pill(text, kind) { return el('span', text, 'pill ' + (kind || '')); }
  function kindOf(outcome) {
    if (outcome === 'handled' || outcome === 'enqueued' || outcome === 'paid' || outcome === 'done') return 'ok';
    if (outcome === 'failed' || outcome === 'store_unavailable' || outcome === 'cancelled') return 'bad';
    if (outcome === 'duplicate' || outcome === 'busy' || outcome === 'skipped' || outcome === 'pending') return 'warn';
    return '';
  }
  function api(method, path) {
    return fetch(path, { method: method, headers: { 'Authorization': 'Bearer ' + token } }).then(function (res) {
      if (res.status === 401) { signOut('That token is not the admin token.'); throw new Error('unauthorized'); }
      return res.json().then(function (body) { if (!res.ok) throw new Error(body.message || ('HTTP ' + res.status)); return body; });
    });
  }
  function signOut(why) {
    token = null;
    sessionStorage.removeItem(KEY);
    if (timer) clearInterval(timer);
    $('view').hidden = true; $('refresh').hidden = true; $('sign-out').hidden = true;
    $('sign-in-card').hidden = false;
    $('sign-in-error').textContent = why || '';
  }
  function cellCode(id) { var td = el('td'); var c = el('code', short(id)); c.title = id; td.appendChild(c); return td; }

  function render(o) {
    document.body.setAttribute('data-processing', o.processing);
    $('mode').textContent = o.processing === 'queue'
      ? 'Queued processing (BullMQ): deliveries are answered once enqueued; a worker runs the handlers with retries.'
      : 'Inline processing: handlers run before the answer; a failure answers 500 and the payment service redelivers.';
    $('t-deliveries').textContent = o.totals.deliveries;
    $('t-runs').textContent = o.totals.handlerRuns;
    $('t-failures').textContent = o.totals.handlerFailures;
    $('t-duplicates').textContent = o.totals.duplicatesDropped;
    $('t-failed').textContent = o.processing === 'queue' ? o.failedCount : '\\u2013';
    $('t-rejected').textContent = o.totals.rejected;
    var rejections = $('rejections').tBodies[0];
    rejections.textContent = '';
    $('rejections-card').hidden = o.rejections.length === 0;
    o.rejections.forEach(function (r) {
      var tr = el('tr');
      tr.appendChild(el('td', time(r.at)));
      tr.appendChild(el('td', String(r.status)));
      var td = el('td'); td.appendChild(pill(r.reason, 'bad')); tr.appendChild(td);
      rejections.appendChild(tr);
    });

    var failed = $('failed-table').tBodies[0];
    failed.textContent = '';
    $('failed-note').textContent = o.processing === 'queue'
      ? (o.failed.length ? 'Handlers failed on every attempt. Fix the cause, then replay: handlers that completed before are skipped.' : 'No failed events.')
      : 'Inline mode has no failed set: the payment service retries failed deliveries itself. Run with SAMPLE_QUEUE_REDIS_URL to use the queue.';
    o.failed.forEach(function (f) {
      var tr = el('tr'); tr.setAttribute('data-event-id', f.eventId);
      tr.appendChild(el('td', f.type)); tr.appendChild(cellCode(f.eventId));
      tr.appendChild(el('td', f.failedReason)); tr.appendChild(el('td', String(f.attemptsMade))); tr.appendChild(el('td', time(f.failedAt)));
      var td = el('td'); var b = el('button', 'Replay'); b.className = 'replay';
      b.addEventListener('click', function () {
        b.disabled = true;
        api('POST', '/admin/api/events/' + encodeURIComponent(f.eventId) + '/replay').then(function () {
          $('message').textContent = 'Replayed ' + f.type + ' ' + short(f.eventId) + ': back in the queue.';
          load();
        }).catch(function (e) { $('message').textContent = 'Replay failed: ' + e.message; b.disabled = false; });
      });
      td.appendChild(b); tr.appendChild(td); failed.appendChild(tr);
    });

    var deliveries = $('deliveries').tBodies[0];
    deliveries.textContent = '';
    o.deliveries.forEach(function (d) {
      var tr = el('tr'); tr.setAttribute('data-event-id', d.eventId); tr.setAttribute('data-last-dispatch', d.lastDispatch || '');
      tr.appendChild(el('td', time(d.lastSeenAt))); tr.appendChild(el('td', d.type)); tr.appendChild(cellCode(d.eventId));
      var answer = el('td');
      if (d.lastAnswer) { answer.appendChild(el('code', String(d.lastAnswer.status) + ' ')); answer.appendChild(pill(d.lastAnswer.outcome, kindOf(d.lastAnswer.outcome))); }
      if (d.lastDispatch && (!d.lastAnswer || d.lastAnswer.outcome !== d.lastDispatch)) { answer.appendChild(el('span', ' \\u2192 ')); answer.appendChild(pill(d.lastDispatch, kindOf(d.lastDispatch))); }
      tr.appendChild(answer);
      var hs = el('td'); var ul = el('ul', undefined, 'handlers');
      d.handlers.forEach(function (h) {
        var li = el('li'); li.appendChild(pill(h.status, kindOf(h.status))); li.appendChild(el('span', ' ' + h.handler + (h.durationMs !== undefined ? ' (' + h.durationMs + ' ms)' : '')));
        if (h.error) li.appendChild(el('div', h.error, 'err'));
        ul.appendChild(li);
      });
      if (!d.handlers.length) ul.appendChild(el('li', d.lastDispatch === 'unhandled' ? 'no handler bound' : 'waiting', 'muted'));
      hs.appendChild(ul); tr.appendChild(hs);
      tr.appendChild(el('td', d.deliveries + ' / ' + d.dispatches));
      deliveries.appendChild(tr);
    });

    var orders = $('orders').tBodies[0];
    orders.textContent = '';
    o.orders.forEach(function (order) {
      var tr = el('tr'); tr.setAttribute('data-order-id', order.id);
      tr.appendChild(el('td', time(order.createdAt))); tr.appendChild(cellCode(order.id));
      tr.appendChild(el('td', money(order.amount, order.currency)));
      var st = el('td'); st.appendChild(pill(order.status, kindOf(order.status)));
      // 'requires_capture' -> 'needs capture'
      if (order.action) st.appendChild(el('span', ' needs ' + order.action.replace(/^requires_/, '').replace(/_/g, ' '), 'muted'));
      // Settled by the reconciler: no webhook came for it.
      if (order.reconciled) st.appendChild(el('span', ' reconciled', 'muted'));
      tr.appendChild(st);
      var td = el('td');
      if (order.status === 'pending') {
        var b = el('button', 'Cancel order'); b.className = 'secondary';
        b.addEventListener('click', function () { b.disabled = true; api('POST', '/admin/api/orders/' + encodeURIComponent(order.id) + '/cancel').then(load, load); });
        td.appendChild(b);
      }
      tr.appendChild(td); orders.appendChild(tr);
    });
    document.body.setAttribute('data-loaded', String(Date.now()));
  }

  function load() { return api('GET', '/admin/api/overview').then(render).catch(function () {}); }
  function start() {
    $('sign-in-card').hidden = true; $('view').hidden = false; $('refresh').hidden = false; $('sign-out').hidden = false;
    load();
    if (timer) clearInterval(timer);
    timer = setInterval(load, 2000);
  }
  $('sign-in').addEventListener('click', function () {
    var value = $('token').value.trim();
    if (!value) return;
    token = value; sessionStorage.setItem(KEY, value); $('token').value = ''; $('sign-in-error').textContent = '';
    start();
  });
  $('token').addEventListener('keydown', function (e) { if (e.key === 'Enter') $('sign-in').click(); });
  $('refresh').addEventListener('click', load);
  $('sign-out').addEventListener('click', function () { signOut(''); });
  if (token) start(); else signOut('');
})();
</script>
</body>
</html>`;
}
