export * from './payment-delivery-listener.interface.js';
export * from './payment-delivery.journal.js';
