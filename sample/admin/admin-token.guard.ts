import {
  Injectable,
  NotFoundException,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { SampleConfig } from '../sample.config.js';

/** The smallest part of a request this guard reads (Express and Fastify both fit). */
interface RequestWithHeaders {
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Guards the operator API: `Authorization: Bearer <SHOP_ADMIN_TOKEN>`, compared in constant time
 * (both sides hashed first, so their lengths do not show either). Without a configured token the
 * operator view does not exist (404). A header, not a cookie: another site cannot make the browser
 * send it, so the replay and cancel buttons need no CSRF token.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  readonly #digest: Buffer | undefined;

  constructor(config: ConfigService) {
    const token = config.getOrThrow<SampleConfig['admin']>('sample.admin').token;
    this.#digest = token === undefined ? undefined : AdminTokenGuard.hash(token);
  }

  /** Whether `/admin` is enabled (a token is configured). */
  get enabled(): boolean {
    return this.#digest !== undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.#digest === undefined)
      throw new NotFoundException('the operator view is disabled: set SHOP_ADMIN_TOKEN to enable it');
    const request = context.switchToHttp().getRequest<RequestWithHeaders>();
    const value = request.headers['authorization'];
    const match = /^Bearer\s+(\S+)$/i.exec(Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));
    if (match === null || !timingSafeEqual(AdminTokenGuard.hash(match[1]!), this.#digest)) {
      throw new UnauthorizedException('a valid admin token is required (Authorization: Bearer <SHOP_ADMIN_TOKEN>)');
    }
    return true;
  }

  private static hash(text: string): Buffer {
    return createHash('sha256').update(text, 'utf8').digest();
  }
}
