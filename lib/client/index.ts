export * from './payments.service.js';
export * from './payments.types.js';
export * from './payments-request.interface.js';
export * from './resources/index.js';
