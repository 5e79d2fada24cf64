export * from './payment-intents.resource.js';
export * from './setup-intents.resource.js';
export * from './webhook-endpoints.resource.js';
