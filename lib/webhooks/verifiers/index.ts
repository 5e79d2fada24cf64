export * from './webhook-verifier.interface.js';
