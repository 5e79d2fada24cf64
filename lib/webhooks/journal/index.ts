export * from '../contracts/payment-delivery-listener.interface.js';
export * from './payment-delivery.journal.js';
