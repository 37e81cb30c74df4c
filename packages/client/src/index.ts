/** `@agp/client`: the HTTP SDK, the fleet simulator and the `agp` CLI. */
export * from './sdk.js';
export * from './simulate.js';
export * from './run-simulation.js';
export * from './keys.js';
export { buildProgram, main, CliError, type CliIo } from './program.js';
export * from './fleet.js';
