import {
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
  Res,
  UseGuards,
  ConflictException,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { OrdersService } from '../orders/orders.service.js';
import { OrdersRepository } from '../orders/orders.repository.js';
import { renderAdminPage } from './admin-page.html.js';
import { AdminOverviewService, type AdminOverview } from './admin-overview.service.js';
import { AdminTokenGuard } from './admin-token.guard.js';

/** The smallest part of an HTTP response this controller needs (Express and Fastify both fit). */
interface HtmlResponse {
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
}

/**
 * The operator view. `GET /admin` serves the page (no data in it; 404 while `SHOP_ADMIN_TOKEN` is
 * unset); the page asks for the token and calls the API below with `Authorization: Bearer <token>`:
 * `GET /admin/api/overview`, `POST /admin/api/events/:id/replay` (queue mode), `POST /admin/api/orders/:id/cancel`.
 */
@Controller('admin')
export class AdminController {
  constructor(
    private readonly guard: AdminTokenGuard,
    private readonly overviews: AdminOverviewService,
    private readonly orders: OrdersService,
    private readonly repository: OrdersRepository,
  ) {}

  @Get()
  page(@Res({ passthrough: true }) res: HtmlResponse): string {
    // Checked before any header is set: the 404 stays a plain JSON error.
    if (!this.guard.enabled)
      throw new NotFoundException(
        'the operator view is disabled: set SHOP_ADMIN_TOKEN (16+ characters) and restart the app',
      );
    const nonce = randomBytes(16).toString('base64');
    const csp = [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
    const headers: Record<string, string> = {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': csp,
    };
    for (const [name, value] of Object.entries(headers)) {
      if (res.setHeader) res.setHeader(name, value);
      else res.header?.(name, value);
    }
    return renderAdminPage(nonce);
  }

  @Get('api/overview')
  @UseGuards(AdminTokenGuard)
  overview(): Promise<AdminOverview> {
    return this.overviews.overview();
  }

  @Post('api/events/:id/replay')
  @HttpCode(200)
  @UseGuards(AdminTokenGuard)
  async replay(@Param('id', new ParseUUIDPipe()) id: string): Promise<{ replayed: true }> {
    if (!(await this.overviews.replay(id))) throw new NotFoundException('no failed event with this id in the queue');
    return { replayed: true };
  }

  @Post('api/orders/:id/cancel')
  @HttpCode(200)
  @UseGuards(AdminTokenGuard)
  cancel(@Param('id', new ParseUUIDPipe()) id: string): { cancelled: true } {
    const existing = this.repository.findById(id);
    if (existing === undefined) throw new NotFoundException('no such order');
    if (this.orders.cancel(id) === undefined)
      throw new ConflictException(
        `the order is ${this.repository.findById(id)?.status ?? existing.status}; only a pending order can be cancelled`,
      );
    return { cancelled: true };
  }
}
