/** `@agp/cli`: the `agp` command-line program (simulate, keys, evals run and gate, replay) and `agp keys`' offline bootstrap. */
export * from './keys.js';
export { buildProgram, main, CliError, CLI_VERSION, type CliIo } from './program.js';
