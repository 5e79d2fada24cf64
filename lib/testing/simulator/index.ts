export * from './payments-simulator.js';
export * from './payments-simulator.options.js';
export type { DeliveryOrder, RateLimitRule, SimulatorControls } from './simulator-controls.js';
