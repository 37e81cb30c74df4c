export * from './service.js';
export * from './module.js';
export * from './ingested-ids.js';
