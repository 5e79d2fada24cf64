export * from './payments.errors.js';
