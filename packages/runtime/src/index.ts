export * from './errors.js';
export * from './problem.js';
export * from './rpc.js';
export * from './config.js';
export * from './logger.js';
export * from './ids.js';
export * from './validate.js';
export * from './ops.js';
