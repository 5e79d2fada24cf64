import type * as http from 'node:http';
import { isUuid } from '../../core/payments.uuid.js';
import type { SimulatedWebhookAttempt, SimulatedWebhookRequest } from './payments-simulator.options.js';
import { SimulatorCheckoutHandler } from './simulator-checkout.handler.js';
import { readJsonObject, sendJson, SimulatorHttpError } from './simulator-http.util.js';
import type { IntentKind, SimulatorState } from './simulator-state.js';
import type { WebhookDeliveryEngine } from './webhook-delivery.engine.js';

/** What a route handler gets. `account` is the authenticated key's account (empty for non-API routes). */
export interface SimulatorRouteContext {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  url: URL;
  params: Record<string, string>;
  account: string;
}

/** One row of the route table. */
export interface SimulatorRoute {
  method: 'GET' | 'POST';
  /** Segments; `:name` matches any one segment. */
  path: string;
  /** API routes count as API requests and need `X-Api-Key` (see `authenticateApiRequest`). */
  api: boolean;
  handle(ctx: SimulatorRouteContext): void | Promise<void>;
}

/** The route of `method` + `segments`, with its `:params`, or undefined. */
export function matchSimulatorRoute(
  routes: readonly SimulatorRoute[],
  method: string,
  segments: readonly string[],
): { route: SimulatorRoute; params: Record<string, string> } | undefined {
  for (const route of routes) {
    if (route.method !== method) continue;
    const pattern = route.path.split('/').filter(Boolean);
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    if (
      pattern.every((part, i) =>
        part.startsWith(':') ? ((params[part.slice(1)] = segments[i]!), true) : part === segments[i],
      )
    ) {
      return { route, params };
    }
  }
  return undefined;
}

/** The parts the routes work on. */
export interface SimulatorRouteDeps {
  state: SimulatorState;
  engine: WebhookDeliveryEngine;
  checkout: SimulatorCheckoutHandler;
}

/** The simulator's HTTP surface: the documented API, the webhook-request operations, and the embedded checkout. */
export function simulatorRoutes({ state, engine, checkout }: SimulatorRouteDeps): SimulatorRoute[] {
  const ownedRequest = (
    id: string,
    account: string,
  ): { record: SimulatedWebhookRequest; attempts: SimulatedWebhookAttempt[] } => {
    const found = isUuid(id) ? engine.get(id) : undefined;
    if (found === undefined) throw new SimulatorHttpError(404, 'not_found', 'No such webhook request.');
    if (found.account !== account)
      throw new SimulatorHttpError(403, 'forbidden', 'The API key may not reach this resource.');
    return found;
  };

  const createIntent =
    (kind: IntentKind) =>
    async ({ req, res, account }: SimulatorRouteContext): Promise<void> => {
      const body = await readJsonObject(req);
      const amount = body['amount'];
      if (amount !== undefined && (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 0)) {
        throw new SimulatorHttpError(400, 'invalid_amount', 'amount must be an integer >= 0.');
      }
      const captureMethod = body['capture_method'];
      if (captureMethod !== undefined && typeof captureMethod !== 'string')
        throw new SimulatorHttpError(400, 'invalid_capture_method', 'capture_method must be a string.');
      const metadata = body['metadata'];
      if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
        throw new SimulatorHttpError(400, 'invalid_metadata', 'metadata must be an object or null.');
      }
      const origins = SimulatorCheckoutHandler.parseOrigins(body['allowed_origins']);
      const intent = state.createIntent(
        kind,
        account,
        kind === 'payment_intent' ? (amount as number | undefined) : undefined,
        kind === 'payment_intent' ? ((captureMethod as string | undefined) ?? 'automatic_async') : undefined,
        (metadata as Record<string, unknown> | null | undefined) ?? null,
      );
      sendJson(res, 201, { ...state.snapshot(intent), ...checkout.issueTokens(intent, origins) });
    };

  const retrieveIntent =
    (kind: IntentKind) =>
    ({ res, params, account }: SimulatorRouteContext): void =>
      sendJson(res, 200, state.snapshot(state.ownedIntent(kind, params['id']!, account)));

  return [
    { method: 'POST', path: '/payment_intents', api: true, handle: createIntent('payment_intent') },
    { method: 'GET', path: '/payment_intents/:id', api: true, handle: retrieveIntent('payment_intent') },
    { method: 'POST', path: '/setup_intents', api: true, handle: createIntent('setup_intent') },
    { method: 'GET', path: '/setup_intents/:id', api: true, handle: retrieveIntent('setup_intent') },
    {
      method: 'POST',
      path: '/webhook_endpoints',
      api: true,
      handle: async ({ req, res, account }) => {
        const body = await readJsonObject(req);
        sendJson(res, 201, state.createEndpoint(account, body['url'], body['events']));
      },
    },
    {
      method: 'GET',
      path: '/webhook_requests',
      api: true,
      handle: ({ res, account }) => sendJson(res, 200, { data: engine.listFor(account) }),
    },
    {
      method: 'GET',
      path: '/webhook_requests/:id',
      api: true,
      handle: ({ res, params, account }) => sendJson(res, 200, ownedRequest(params['id']!, account).record),
    },
    {
      method: 'GET',
      path: '/webhook_requests/:id/attempts',
      api: true,
      handle: ({ res, params, account }) => sendJson(res, 200, { data: ownedRequest(params['id']!, account).attempts }),
    },
    {
      method: 'POST',
      path: '/webhook_requests/:id/resend',
      api: true,
      handle: ({ res, params, account }) => {
        const id = params['id']!;
        ownedRequest(id, account);
        if (engine.resend(id) === 'busy')
          throw new SimulatorHttpError(
            409,
            'delivery_in_progress',
            'The request is being delivered or waiting; resend it once it has finished.',
          );
        sendJson(res, 202, engine.get(id)!.record);
      },
    },
    { method: 'GET', path: '/embed/checkout', api: false, handle: ({ res, url }) => checkout.page(res, url) },
    { method: 'POST', path: '/embed/confirm', api: false, handle: ({ req, res }) => checkout.confirm(req, res) },
  ];
}
