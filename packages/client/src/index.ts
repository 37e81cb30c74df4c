/** `@agp/client`: the HTTP SDK, the fleet simulator and the `agp` CLI. */
export * from './sdk.js';
export * from './simulate.js';
export * from './run-simulation.js';
export * from './keys.js';
export { buildProgram, main, CliError, CLI_VERSION, type CliIo } from './program.js';
export * from './fleet.js';
