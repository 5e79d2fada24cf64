import { Module } from '@nestjs/common';
import { OrdersModule } from '../orders/orders.module.js';
import { SampleWebhooksModule } from '../webhooks/sample-webhooks.module.js';
import { AdminController } from './admin.controller.js';
import { AdminOverviewService } from './admin-overview.service.js';
import { AdminTokenGuard } from './admin-token.guard.js';

/** The operator view `/admin` (guarded by `SHOP_ADMIN_TOKEN`; disabled without it). */
@Module({
  imports: [OrdersModule, SampleWebhooksModule],
  controllers: [AdminController],
  providers: [AdminTokenGuard, AdminOverviewService],
})
export class AdminModule {}
