import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { PaymentsHealthIndicator, PaymentsHealthModule } from 'nestjs-payments/health';

/** The health recipe of docs/observability.md, on @nestjs/terminus 11 (the peer range's older major). */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly payments: PaymentsHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.payments.isHealthy('payments', { timeoutMs: 1000 })]);
  }
}

@Module({ imports: [PaymentsHealthModule], controllers: [HealthController] })
export class HealthModule {}
