import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { HttpException } from '@nestjs/common';
import {
  MemoryIdempotencyStore,
  OnPaymentEvent,
  PaymentDeliveryJournal,
  PaymentsError,
  PaymentsInvalidArgumentError,
  RedisIdempotencyStore,
} from '../../../lib/index.js';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { assertUuid } from '../../../lib/client/payments-request.validation.js';

/**
 * Every class an entry point exports that is an Error, by name. A Nest `HttpException` is not one of
 * them: it is how the receiver answers a refused delivery, written by its own filter, never thrown to
 * application code.
 */
async function errorClassesOf(entry: string): Promise<Array<[string, new (...args: never[]) => unknown]>> {
  const exports = (await import(entry)) as Record<string, unknown>;
  return Object.entries(exports).filter(
    (pair): pair is [string, new (...args: never[]) => unknown] =>
      typeof pair[1] === 'function' &&
      (pair[1] as { prototype?: unknown }).prototype instanceof Error &&
      !((pair[1] as { prototype?: unknown }).prototype instanceof HttpException),
  );
}

/** Calls `fn` and returns what it threw. */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new PaymentsError('expected a throw');
}

describe('one error base: everything the package throws is a PaymentsError', () => {
  it('every error class of the root and testing entries extends PaymentsError', async () => {
    const classes = [
      ...(await errorClassesOf('../../../lib/index.js')),
      ...(await errorClassesOf('../../../lib/testing/index.js')),
    ];
    expect(classes.map(([name]) => name)).toContain('PaymentsConfigurationError');
    for (const [name, type] of classes) {
      expect({ name, isPaymentsError: type === PaymentsError || type.prototype instanceof PaymentsError }).toEqual({
        name,
        isPaymentsError: true,
      });
    }
  });

  it('@OnPaymentEvent() misuse is a PaymentsInvalidArgumentError with a neutral message', () => {
    const noName = thrownBy(() => (OnPaymentEvent as unknown as () => unknown)());
    expect(noName).toBeInstanceOf(PaymentsInvalidArgumentError);
    expect((noName as Error).message).toBe('@OnPaymentEvent(): `types` must name at least one event name or wildcard.');

    const optionsFirst = thrownBy(() =>
      (OnPaymentEvent as unknown as (...args: unknown[]) => unknown)(
        { transactional: true },
        'payment_intent.succeeded',
      ),
    );
    expect(optionsFirst).toBeInstanceOf(PaymentsInvalidArgumentError);
    expect((optionsFirst as Error).message).not.toMatch(/payment service/);
  });

  it('a client call keeps its note that nothing was sent; other bad arguments do not claim it', () => {
    expect(thrownBy(() => assertUuid('nope', 'paymentIntents.retrieve'))).toMatchObject({
      name: 'PaymentsInvalidArgumentError',
      message:
        'paymentIntents.retrieve: `id` must be a UUID, got a string of 4 character(s). Nothing was sent to the payment service.',
    });
    const store = thrownBy(() => new MemoryIdempotencyStore({ maxEntries: 0 }));
    expect(store).toBeInstanceOf(PaymentsInvalidArgumentError);
    expect(store).toMatchObject({ where: 'MemoryIdempotencyStore', argument: 'maxEntries' });
    expect((store as Error).message).not.toMatch(/payment service/);
  });

  it('store, journal and simulator constructors and controls refuse bad arguments with PaymentsInvalidArgumentError', () => {
    const refusals: Array<[string, () => unknown, string]> = [
      ['RedisIdempotencyStore', () => new RedisIdempotencyStore({} as never), 'redis'],
      [
        'RedisIdempotencyStore',
        () => new RedisIdempotencyStore({ eval: () => 1, evalsha: () => 1 } as never, { attemptsTtlSeconds: 0 }),
        'attemptsTtlSeconds',
      ],
      ['PaymentDeliveryJournal', () => new PaymentDeliveryJournal({ maxEntries: 0 }), 'maxEntries'],
      [
        'PaymentsSimulator.controls.duplicateDeliveries',
        () => new PaymentsSimulator().controls.duplicateDeliveries(0),
        'copies',
      ],
      ['PaymentsSimulator.controls.delayDeliveries', () => new PaymentsSimulator().controls.delayDeliveries(-1), 'ms'],
      ['PaymentsSimulator.controls.rateLimit', () => new PaymentsSimulator().controls.rateLimit({ ratio: 2 }), 'ratio'],
    ];
    for (const [where, fn, argument] of refusals) {
      const error = thrownBy(fn);
      expect(error).toBeInstanceOf(PaymentsInvalidArgumentError);
      expect(error).toMatchObject({ where, argument });
    }
  });

  it('a simulator used before start() throws a PaymentsError', () => {
    const error = thrownBy(() => new PaymentsSimulator().baseUrl);
    expect(error).toBeInstanceOf(PaymentsError);
    expect((error as Error).message).toMatch(/not started/);
  });
});
