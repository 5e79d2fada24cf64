import { Injectable } from '@nestjs/common';
import type { PaymentMethodSetup, PaymentMethodSetupStatus } from './payment-method-setup.model.js';

/** In-memory setups; status changes are compare-and-set, as in `OrdersRepository`. */
@Injectable()
export class PaymentMethodSetupsRepository {
  readonly #setups = new Map<string, PaymentMethodSetup>();
  readonly #bySetupIntent = new Map<string, string>();

  insert(id: string, setupIntentId: string): PaymentMethodSetup {
    const at = new Date().toISOString();
    const setup: PaymentMethodSetup = Object.freeze({
      id,
      setupIntentId,
      status: 'pending',
      createdAt: at,
      updatedAt: at,
    });
    this.#setups.set(id, setup);
    this.#bySetupIntent.set(setupIntentId, id);
    return setup;
  }

  findById(id: string): PaymentMethodSetup | undefined {
    return this.#setups.get(id);
  }

  findBySetupIntent(setupIntentId: string): PaymentMethodSetup | undefined {
    const id = this.#bySetupIntent.get(setupIntentId);
    return id === undefined ? undefined : this.#setups.get(id);
  }

  /** Moves the setup to `to` only if its status is one of `from`; `undefined` when nothing changed. */
  transition(
    id: string,
    from: readonly PaymentMethodSetupStatus[],
    to: PaymentMethodSetupStatus,
    reason: string,
  ): PaymentMethodSetup | undefined {
    const current = this.#setups.get(id);
    if (current === undefined || !from.includes(current.status)) return undefined;
    const next: PaymentMethodSetup = Object.freeze({
      ...current,
      status: to,
      reason,
      updatedAt: new Date().toISOString(),
    });
    this.#setups.set(id, next);
    return next;
  }
}
