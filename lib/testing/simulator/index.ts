export * from './payments-simulator.js';
export * from './payments-simulator.options.js';
export { SimulatorControls } from './simulator-controls.js';
export type { RateLimitRule, DeliveryOrder } from './simulator-controls.js';
export { PAYMENT_OUTCOMES, SETUP_OUTCOMES } from './checkout-page.html.js';
