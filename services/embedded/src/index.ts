export * from './platform.js';
export * from './banner.js';
export * from './memory.js';
