export * from './service.js';
export * from './module.js';
