export * from './payments-telemetry.names.js';
export * from './payments.telemetry.js';
