/** Message texts of the module's errors, kept in one file (as `@nestjs/bullmq` does). */

export const AUTHENTICATION_HINT =
  'The API key is missing, inactive, or belongs to the other environment: sandbox keys only work ' +
  'against the sandbox base address and production keys only against the production base address ' +
  '(check `environment` and `baseUrl`). A leaked key is rotated from the dashboard.';

export const PERMISSION_HINT = 'The API key may not reach this resource.';

export const RATE_LIMIT_HINT = 'The service kept answering 429 Too Many Requests after all retries.';

export const configurationMessage = (option: string, problem: string, fix: string): string =>
  `Invalid PaymentsModule option \`${option}\`: ${problem}. Fix: ${fix}`;

/** A refused argument: names the call or constructor, the argument and the problem, never the value. */
export const invalidArgumentMessage = (
  where: string,
  argument: string,
  problem: string,
  consequence?: string,
): string => `${where}: \`${argument}\` ${problem}.${consequence === undefined ? '' : ` ${consequence}`}`;

/** What the client adds to a refused argument: the call stopped before the network. */
export const NOTHING_SENT_NOTE = 'Nothing was sent to the payment service.';

/** A non-2xx answer: the call, the status and, for 401/403/429, what usually causes it. */
export const apiErrorMessage = (method: string, path: string, status: number, hint?: string): string =>
  `${method} ${path} failed with status ${status}${hint === undefined ? '' : `. ${hint}`}`;

/** 429 after every retry. */
export const rateLimitMessage = (method: string, path: string, attempts: number): string =>
  `${method} ${path} failed with status 429 after ${attempts} attempt(s). ${RATE_LIMIT_HINT}`;

/** No HTTP answer at all. */
export const connectionMessage = (method: string, path: string, code: string, attempts: number): string =>
  `${method} ${path} got no answer from the payment service (${code}) after ${attempts} attempt(s)`;

/** An answer larger than `http.maxResponseBytes`: nothing of it is kept. */
export const responseTooLargeMessage = (method: string, path: string, status: number, maxBytes: number): string =>
  `${method} ${path} answered status ${status} with a body larger than http.maxResponseBytes (${maxBytes} bytes); it was not read further and is not kept`;

/** A response stream closed before its body was complete (retried like a reset connection). */
export const ANSWER_ENDED_EARLY_MESSAGE = 'the answer ended before its body';

/**
 * Problems the built-in stores and the delivery journal refuse in their constructors (thrown as
 * `PaymentsInvalidArgumentError`, which names the class and the argument).
 */
export const STORE_ARGUMENT_MESSAGES = {
  redisClient: 'must be an ioredis client (new Redis(url) or new Cluster(nodes))',
  wholeSecondsAtLeastOne: 'must be a whole number of seconds >= 1, or omitted for the default',
  positiveSeconds: "must be a number of seconds > 0 (at least the service's retry window), or omitted for the default",
  maxEntries: 'must be an integer >= 1, or omitted for the default',
  memoryMaxEntries: 'must be an integer >= 1, above (events per retention period x handlers), or omitted for 100000',
  positiveDurationMs: 'must be a finite number of milliseconds > 0',
} as const;
