// PLACEHOLDER — replaced by the client implementation (issue 2).
import { Inject, Injectable } from '@nestjs/common';
import { PAYMENTS_RESOLVED_OPTIONS } from '../payments.constants.js';
import type { ResolvedPaymentsOptions } from '../payments-options.interface.js';

@Injectable()
export class PaymentsService {
  constructor(@Inject(PAYMENTS_RESOLVED_OPTIONS) readonly options: ResolvedPaymentsOptions) {}
}
