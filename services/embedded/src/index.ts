export * from './platform.js';
export * from './banner.js';
