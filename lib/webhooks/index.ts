export * from './payment-event.types.js';
export * from './payment-events-processor.interface.js';
export * from './verifiers/index.js';
export * from './stores/index.js';
export * from './queue/index.js';
