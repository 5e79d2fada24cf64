import type * as http from 'node:http';
import type { SimulatorRequestCounts } from './payments-simulator.options.js';
import type { SimulatorControls } from './simulator-controls.js';
import { header, SimulatorHttpError } from './simulator-http.util.js';
import type { SimulatorState } from './simulator-state.js';

/**
 * Throttling (`controls.rateLimit`), then the header rules of the reference: no `X-Account-Id`, a
 * known active `X-Api-Key`, `X-Api-Version: 1`. Returns the key's account; throws the HTTP answer.
 */
export function authenticateApiRequest(
  req: http.IncomingMessage,
  state: SimulatorState,
  controls: SimulatorControls,
  counts: SimulatorRequestCounts,
): string {
  const retryAfter = controls.takeRateLimit();
  if (retryAfter !== undefined) {
    counts.rateLimited += 1;
    throw new SimulatorHttpError(429, 'rate_limited', 'Too many requests.', { 'retry-after': String(retryAfter) });
  }
  if (header(req, 'x-account-id') !== undefined) {
    throw new SimulatorHttpError(
      400,
      'account_header_not_allowed',
      'X-Account-Id must not be sent: the account comes from the API key.',
    );
  }
  const key = header(req, 'x-api-key');
  const entry = key === undefined ? undefined : state.keys.get(key);
  if (entry === undefined || !entry.active)
    throw new SimulatorHttpError(401, 'unauthorized', 'The API key is missing or inactive.');
  const version = header(req, 'x-api-version');
  if (version === undefined)
    throw new SimulatorHttpError(400, 'missing_api_version', 'The X-Api-Version header is required.');
  if (version !== '1')
    throw new SimulatorHttpError(400, 'unsupported_api_version', 'Only X-Api-Version 1 is supported.');
  return entry.account;
}
