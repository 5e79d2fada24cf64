import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { transpileToCache, type TranspiledTree } from '../../fixtures/transpile.fixture.js';

/*
 * docs/named-instances.md's "short version", run as written (issue 20, item 8): the code block is read
 * from the page, so the page and this test cannot drift. Only `from 'nestjs-payments'` is pointed at
 * this checkout's lib/. It runs in a process of its own (transpiled with lib/), against two
 * simulators, one per account, with the variables the page names.
 */
const PAGE = readFileSync(join(process.cwd(), 'docs/named-instances.md'), 'utf8');
const BLOCK = /## The short version[\s\S]*?```ts\n([\s\S]*?)```/.exec(PAGE)?.[1];

const SECRET = `whsec_${Buffer.from('default-account-endpoint-secret!').toString('base64')}`;
const EU_SECRET = `whsec_${Buffer.from('eu-account-endpoint-secret-32b!!').toString('base64')}`;

/** Appended to the page's code: boots it, uses both clients, posts one signed delivery per route. */
const HARNESS = (testing: string) => `
import { NestFactory } from '@nestjs/core';
import { createPaymentEvent, signWebhook } from '${testing}';

const app = await NestFactory.create(AppModule, { rawBody: true, logger: ['error'] });
await app.listen(0, '127.0.0.1');
const base = await app.getUrl();
const orders = app.get(OrdersPayments);
const intents = [
  (await orders.payments.paymentIntents.create({ amount: 1500 })).id,
  (await orders.euPayments.paymentIntents.create({ amount: 2500 })).id,
];
const post = (path: string, event: object, secret: string) => {
  const { rawBody, headers } = signWebhook(event, { scheme: 'standard-webhooks', secret });
  return fetch(base + path, { method: 'POST', headers, body: rawBody }).then((r) => r.status);
};
const events = [createPaymentEvent('payment_intent.succeeded'), createPaymentEvent('payment_intent.succeeded')];
const statuses = {
  default: await post('/payments/webhooks', events[0]!, process.env.PAYMENTS_WEBHOOK_SECRET!),
  eu: await post('/payments/eu/webhooks', events[1]!, process.env.PAYMENTS_EU_WEBHOOK_SECRET!),
  // signed with the other account's secret: refused by 'eu'
  crossed: await post('/payments/eu/webhooks', createPaymentEvent('payment_intent.succeeded'), process.env.PAYMENTS_WEBHOOK_SECRET!),
};
process.stdout.write(JSON.stringify({ intents, events: events.map((e) => e.id), statuses, fulfilled: orders.fulfilled }) + '\\n');
await app.close();
`;

describe('docs/named-instances.md, the short version', () => {
  let tree: TranspiledTree;
  const sim = new PaymentsSimulator({ apiKeys: ['sk_test_default_account'] });
  const euSim = new PaymentsSimulator({ apiKeys: ['sk_test_eu_account'] });
  let env: Record<string, string>;

  beforeAll(async () => {
    tree = transpileToCache('payments-docs-named', ['lib']);
    env = {
      PAYMENTS_API_KEY: 'sk_test_default_account',
      PAYMENTS_BASE_URL: await sim.start(),
      PAYMENTS_WEBHOOK_SECRET: SECRET,
      PAYMENTS_EU_API_KEY: 'sk_test_eu_account',
      PAYMENTS_EU_BASE_URL: await euSim.start(),
      PAYMENTS_EU_WEBHOOK_SECRET: EU_SECRET,
      PAYMENTS_ALLOW_INSECURE_HTTP: 'true',
    };
  });
  afterAll(async () => {
    await sim.stop();
    await euSim.stop();
    tree?.remove();
  });

  it('boots both instances; each client reaches its own account, each route runs only its own handler', async () => {
    expect(BLOCK).toContain("from 'nestjs-payments'");
    const lib = join(tree.dir, 'lib');
    const code =
      BLOCK!.replace("from 'nestjs-payments'", `from '${lib}/index.js'`) + HARNESS(`${lib}/testing/index.js`);
    const main = tree.add('docs/named-instances.snippet.ts', code);
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [main], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
    });
    const result = JSON.parse(output.trim().split('\n').pop()!) as {
      intents: [string, string];
      events: [string, string];
      statuses: Record<string, number>;
      fulfilled: string[];
    };
    // Each client created its intent with its own key at its own address.
    expect(sim.intent(result.intents[0])).toBeDefined();
    expect(sim.intent(result.intents[1])).toBeUndefined();
    expect(euSim.intent(result.intents[1])).toBeDefined();
    expect(euSim.intent(result.intents[0])).toBeUndefined();
    expect(result.statuses).toEqual({ default: 200, eu: 200, crossed: 401 });
    expect(result.fulfilled).toEqual([`default ${result.events[0]}`, `eu ${result.events[1]}`]);
  }, 60_000);
});
