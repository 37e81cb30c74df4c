import v8 from 'node:v8';

/**
 * Node flags `npm start` (and so `npm run quickstart`) passes to `services/embedded/dist/main.js`: a 2 MB V8
 * semi-space (young generation) instead of Node 20's 16 MB. The young generation is sized when the heap is set up, so
 * this one flag only works on the command line (`v8.setFlagsFromString` after start-up has no effect, measured); a
 * direct `node services/embedded/dist/main.js` runs without it (~40 MB more RSS). Keep in sync with package.json
 * "start" and bench/run.ts (f). Source: docs/performance.md (Embedded memory).
 */
export const EMBEDDED_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/**
 * V8 flags the embedded process sets on itself before PGlite compiles its WebAssembly module, whatever started it:
 * `--liftoff-only` keeps PostgreSQL's WASM code in V8's baseline compiler (Liftoff). Without it V8 recompiles the hot
 * PostgreSQL functions with TurboFan on background threads, which costs 35-60 MB of RSS that is never given back
 * (compiler zones in per-thread malloc arenas, plus the optimised code). Source: docs/decisions.md (Embedded memory).
 */
export const EMBEDDED_V8_FLAGS: readonly string[] = ['--liftoff-only'];

/**
 * Apply {@link EMBEDDED_V8_FLAGS} to this process, unless `AGP_LOW_MEMORY=0` (to compare, or when WASM speed matters
 * more than memory). Must run before the first PGlite instance is created; it only affects WebAssembly compiled after
 * it. Returns the flags applied.
 * @param env environment to read AGP_LOW_MEMORY from @default process.env
 */
export function applyEmbeddedV8Flags(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.AGP_LOW_MEMORY === '0') return [];
  for (const flag of EMBEDDED_V8_FLAGS) v8.setFlagsFromString(flag);
  return [...EMBEDDED_V8_FLAGS];
}
