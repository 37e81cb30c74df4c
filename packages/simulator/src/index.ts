/**
 * `@agp/simulator`: the simulated fleet behind `agp simulate` (docs/ingest.md, Simulated data). It generates agents'
 * runs, actions, interventions and ledger entries from a seeded PRNG and a catalogue of actions, and sends them to a
 * gateway over HTTP (`@agp/sdk/http`). It opens no database: no PostgreSQL, PGlite or event-store driver
 * (test/package-boundaries.test.ts).
 */
export * from './simulate.js';
export * from './run-simulation.js';
export * from './fleet.js';
/** The catalogue of simulated actions by name (inputs, outputs, cost in USD); `agp replay`'s tests check the example handlers cover it. */
export { ACTIONS as SIMULATED_ACTIONS, type ActionSpec } from './catalogue.js';
