import { FulfilmentService } from '../../../sample/orders/fulfilment.service.js';
import type { Order } from '../../../sample/orders/order.model.js';

/** The real fulfilment, counting how often the handlers call it. */
export class CountingFulfilment extends FulfilmentService {
  calls = 0;

  override async fulfil(order: Order): Promise<boolean> {
    this.calls += 1;
    return super.fulfil(order);
  }
}

/**
 * Fails the first `failures` calls (as a warehouse API that is down would), then behaves. Injected
 * with `overrideProvider(FulfilmentService)`: the production code has no fault switch.
 */
export class FlakyFulfilment extends CountingFulfilment {
  constructor(private failures = 1) {
    super();
  }

  override async fulfil(order: Order): Promise<boolean> {
    if (this.failures > 0) {
      this.failures -= 1;
      this.calls += 1;
      throw new Error('warehouse unavailable');
    }
    return super.fulfil(order);
  }
}
