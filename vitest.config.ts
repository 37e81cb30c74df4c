import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * One run covers unit tests (`*.test.ts` beside the code), integration tests (`*.int.test.ts`,
 * real NATS and PostgreSQL) and end-to-end tests under `test/`. The global setup resolves the
 * infrastructure once: DATABASE_URL / NATS_URL, else testcontainers when Docker works, else the
 * integration suites skip and say why.
 */
export default defineConfig({
  // @agp/sdk's package exports point at its built bundle (for the packed tarball); inside the repository it is its source.
  resolve: {
    alias: [
      { find: /^@agp\/sdk$/, replacement: fileURLToPath(new URL('./packages/sdk/src/index.ts', import.meta.url)) },
      // `@agp/sdk/http`, the HTTP client the SDK is built on, is a workspace-only entry (the CLI and the simulator use it).
      { find: /^@agp\/sdk\/http$/, replacement: fileURLToPath(new URL('./packages/sdk/src/http.ts', import.meta.url)) },
      // Its subpath exports (`@agp/sdk/langchain`, …) are the framework adapters in src/adapters.
      { find: /^@agp\/sdk\/([a-z-]+)$/, replacement: fileURLToPath(new URL('./packages/sdk/src/adapters/', import.meta.url)) + '$1.ts' },
    ],
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'services/*/src/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default'],
  },
});
