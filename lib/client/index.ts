export * from './payments.service.js';
export * from './payments.types.js';
