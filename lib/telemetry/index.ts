export * from './payments-telemetry.names.js';
export * from './payments.telemetry.js';
export * from './delivery-telemetry.request.js';
