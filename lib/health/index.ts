export * from './payments.health-indicator.js';
export * from './payments-health.module.js';
