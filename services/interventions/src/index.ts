export * from './service.js';
export * from './module.js';
export * from './env.js';
