import {
  AUTHENTICATION_HINT,
  PERMISSION_HINT,
  apiErrorMessage,
  configurationMessage,
  connectionMessage,
  invalidArgumentMessage,
  rateLimitMessage,
  responseTooLargeMessage,
} from './payments.messages.js';

import type { PaymentsHttpMethod } from '../core/payments-http-method.js';

export type { PaymentsHttpMethod } from '../core/payments-http-method.js';

/**
 * Base of every error the package throws (client, receiver, stores, queue, testing kit), so one
 * `instanceof PaymentsError` tells the package's errors from the application's.
 */
export class PaymentsError extends Error {
  override readonly name: string = 'PaymentsError';
}

/**
 * A bad module option, thrown at boot. The message names the option and the fix; it never echoes
 * the value of `apiKey` or of a webhook secret.
 *
 * @example new PaymentsConfigurationError('baseUrl', 'is not a URL', 'pass an absolute https:// URL')
 */
export class PaymentsConfigurationError extends PaymentsError {
  override readonly name = 'PaymentsConfigurationError';
  constructor(
    readonly option: string,
    problem: string,
    fix: string,
  ) {
    super(configurationMessage(option, problem, fix));
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, message: this.message, option: this.option };
  }
}

/**
 * A bad argument that is not a module option: to a client call (an id that is not a UUID, a
 * `request()` path that is not a relative path of the service, a query, header or body of the wrong
 * type: nothing is sent), to a decorator, or to a store or testing-kit constructor. The message names
 * the call, the argument and the problem; it never echoes the value (a confused caller may have
 * passed a key).
 *
 * @example await payments.paymentIntents.retrieve('42') // rejects with PaymentsInvalidArgumentError
 */
export class PaymentsInvalidArgumentError extends PaymentsError {
  override readonly name = 'PaymentsInvalidArgumentError';
  constructor(
    /** The call, e.g. `paymentIntents.retrieve` or `request`. */
    readonly where: string,
    /** The argument, e.g. `id` or `path`. */
    readonly argument: string,
    problem: string,
    /** What followed from the refusal, e.g. that nothing was sent; appended to the message. */
    consequence?: string,
  ) {
    super(invalidArgumentMessage(where, argument, problem, consequence));
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, message: this.message, where: this.where, argument: this.argument };
  }
}

export interface PaymentsApiErrorInit {
  status: number;
  method: PaymentsHttpMethod;
  /** Path relative to the base URL, without query string. */
  path: string;
  /** Parsed response body (JSON when the service sent JSON, else the text). */
  body?: unknown;
  /** How many requests were sent for this call. */
  attempts?: number;
  message?: string;
}

/**
 * The service answered with a non-2xx status. Carries `status`, `method`, `path` and the parsed
 * response `body`; never a request header, so never the API key.
 */
export class PaymentsApiError extends PaymentsError {
  override readonly name: string = 'PaymentsApiError';
  readonly status: number;
  readonly method: PaymentsHttpMethod;
  readonly path: string;
  readonly body: unknown;
  readonly attempts: number;

  constructor(init: PaymentsApiErrorInit) {
    super(init.message ?? apiErrorMessage(init.method, init.path, init.status));
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.body = init.body;
    this.attempts = init.attempts ?? 1;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      status: this.status,
      method: this.method,
      path: this.path,
      body: this.body,
      attempts: this.attempts,
    };
  }
}

/** 401: the API key is missing or inactive (or belongs to the other environment). */
export class PaymentsAuthenticationError extends PaymentsApiError {
  override readonly name = 'PaymentsAuthenticationError';
  constructor(init: Omit<PaymentsApiErrorInit, 'status' | 'message'>) {
    super({ ...init, status: 401, message: apiErrorMessage(init.method, init.path, 401, AUTHENTICATION_HINT) });
  }
}

/** 403: the API key may not reach the resource. */
export class PaymentsPermissionError extends PaymentsApiError {
  override readonly name = 'PaymentsPermissionError';
  constructor(init: Omit<PaymentsApiErrorInit, 'status' | 'message'>) {
    super({ ...init, status: 403, message: apiErrorMessage(init.method, init.path, 403, PERMISSION_HINT) });
  }
}

/** 429 after every retry allowed by `http.maxRetries`. */
export class PaymentsRateLimitError extends PaymentsApiError {
  override readonly name = 'PaymentsRateLimitError';
  /** The last `Retry-After` the service sent, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(init: Omit<PaymentsApiErrorInit, 'status' | 'message'> & { retryAfterMs?: number }) {
    super({
      ...init,
      status: 429,
      message: rateLimitMessage(init.method, init.path, init.attempts ?? 1),
    });
    this.retryAfterMs = init.retryAfterMs;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), retryAfterMs: this.retryAfterMs };
  }
}

/**
 * The service (or something in between) answered a body larger than `http.maxResponseBytes`. The
 * client stopped reading at the cap and keeps none of it (`body` is undefined), so an app that logs
 * its errors never logs a huge or hostile answer. Not retried. `status` is the answer's status.
 */
export class PaymentsResponseTooLargeError extends PaymentsApiError {
  override readonly name = 'PaymentsResponseTooLargeError';
  /** The cap in force (`http.maxResponseBytes`). */
  readonly maxResponseBytes: number;
  constructor(init: Omit<PaymentsApiErrorInit, 'message' | 'body'> & { maxResponseBytes: number }) {
    super({
      ...init,
      body: undefined,
      message: responseTooLargeMessage(init.method, init.path, init.status, init.maxResponseBytes),
    });
    this.maxResponseBytes = init.maxResponseBytes;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), maxResponseBytes: this.maxResponseBytes };
  }
}

/**
 * The request did not get an HTTP answer: connection refused or reset, DNS failure, timeout.
 * `code` is the system error code (`ECONNREFUSED`, `ETIMEDOUT`, ...). The original low-level error
 * is deliberately not attached: an AxiosError carries the request headers, and so the API key.
 */
export class PaymentsConnectionError extends PaymentsError {
  override readonly name = 'PaymentsConnectionError';
  constructor(
    readonly method: PaymentsHttpMethod,
    readonly path: string,
    readonly code: string,
    readonly attempts: number = 1,
  ) {
    super(connectionMessage(method, path, code, attempts));
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      method: this.method,
      path: this.path,
      code: this.code,
      attempts: this.attempts,
    };
  }
}

/**
 * Rejected by a plug-in's `aroundHandler` hook (the transactional inbox) when its own engine failed,
 * not the handler: the run is released and answered 503 (`store_unavailable`), as a failure of the
 * idempotency store is.
 */
export class HandlerCallUnavailableError extends PaymentsError {
  override readonly name = 'HandlerCallUnavailableError';
  constructor(
    readonly plugin: string,
    readonly reason: unknown,
  ) {
    super(
      `The ${plugin} could not run the handler: ${reason instanceof Error ? `${reason.name}: ${reason.message}` : typeof reason}`,
    );
  }
}
