export * from './payments.defaults.js';
export * from './payments.runtime.js';
export * from './payments-http-method.js';
export * from './payments.uuid.js';
export * from './payments.instance.js';
export * from './payments.pending.js';
