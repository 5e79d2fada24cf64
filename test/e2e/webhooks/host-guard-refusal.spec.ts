import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
  type Provider,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { PAYMENT_HANDLER_FIXTURES, FulfilmentHandler } from '../../fixtures/webhooks/payment-handlers.fixture.js';
import {
  post,
  sign,
  startWebhookApp,
  type AdapterName,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';

/*
 * Issue 32, item 5: a host app's global guard that does not let the webhook route through refuses every
 * signed delivery with `401 {"received":false,"error":"rejected"}`, which from outside looks exactly like
 * a wrong secret. The receiver says so in the log, once per window, naming the guard when it can be
 * known and the fix (isPaymentsWebhookRoute). Real global guards (APP_GUARD), a real app per adapter.
 */

/** Like Passport's `AuthGuard('jwt')`: no bearer token, so `handleRequest` throws 401. */
@Injectable()
class JwtAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return this.handleRequest(request.headers.authorization);
  }

  handleRequest(authorization: string | undefined): boolean {
    if (authorization?.startsWith('Bearer ') !== true) throw new UnauthorizedException();
    return true;
  }
}

/** A guard that returns false (Nest answers its own 403 "Forbidden resource"). */
@Injectable()
class ApiKeyGuard implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

/** A guard that lets everything through. */
@Injectable()
class AuditGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

const PATH = 'payments/webhooks';
const FIX = 'if (isPaymentsWebhookRoute(context, reflector)) return true;';

describe.each(['express', 'fastify'] as const)(
  "a host's global guard that refuses deliveries, on %s",
  (adapter: AdapterName) => {
    let host: WebhookApp | undefined;
    const logger = new CapturingLogger();

    async function start(guards: Provider[]): Promise<string> {
      logger.clear();
      host = await startWebhookApp({
        adapter,
        logger,
        providers: [...PAYMENT_HANDLER_FIXTURES, ...guards],
      });
      return `${host.baseUrl}/${PATH}`;
    }
    const refusals = (): string[] =>
      logger.messages('warn').filter((line) => line.includes('before the receiver checked its signature'));

    afterEach(async () => {
      await host?.close();
      host = undefined;
    });

    it('a guard that throws 401 (AuthGuard-like): answered rejected, and one warning names it and the fix', async () => {
      const url = await start([{ provide: APP_GUARD, useClass: JwtAuthGuard }]);
      for (let i = 0; i < 3; i += 1) {
        const event = createPaymentEvent('payment_intent.succeeded');
        expect(await post(url, sign(event))).toEqual({ status: 401, body: { received: false, error: 'rejected' } });
        expect(host!.app.get(FulfilmentHandler).callsFor(event.id)).toHaveLength(0);
      }
      const lines = refusals();
      expect(lines).toHaveLength(1); // three refusals, one line in the window
      expect(lines[0]).toContain(`refused with 401 by the app's global guard JwtAuthGuard`);
      expect(lines[0]).toContain(`POST /${PATH}`);
      expect(lines[0]).toContain(FIX);
    });

    it('the only global guard returns false (403): it is named', async () => {
      const url = await start([{ provide: APP_GUARD, useClass: ApiKeyGuard }]);
      const event = createPaymentEvent('payment_intent.succeeded');
      expect(await post(url, sign(event))).toEqual({ status: 403, body: { received: false, error: 'rejected' } });
      expect(refusals()).toEqual([expect.stringContaining(`refused with 403 by the app's global guard ApiKeyGuard`)]);
    });

    it('one of two global guards returns false: not known which, so "a guard or middleware of the app"', async () => {
      const url = await start([
        { provide: APP_GUARD, useClass: AuditGuard },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
      ]);
      const event = createPaymentEvent('payment_intent.succeeded');
      expect((await post(url, sign(event))).status).toBe(403);
      const lines = refusals();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('refused with 403 by a guard or middleware of the app');
      expect(lines[0]).toContain(FIX);
    });

    it('no line when no guard refuses (a signed delivery is handled)', async () => {
      const url = await start([{ provide: APP_GUARD, useClass: AuditGuard }]);
      const event = createPaymentEvent('payment_intent.succeeded');
      expect(await post(url, sign(event))).toEqual({ status: 200, body: { received: true, outcome: 'handled' } });
      expect(refusals()).toEqual([]);
    });
  },
);
