/**
 * Vite build of the console. The output (`dist/`) is served by the gateway: `index.html` for `/` and every console
 * route (history fallback), hashed files under `/assets/` with a year-long immutable cache. No React plugin: esbuild
 * compiles the JSX (automatic runtime); there is no dev-server hot reload to support (see README.md).
 */
import { defineConfig } from 'vite';

export default defineConfig(({ command }) => ({
  root: import.meta.dirname,
  // A build is always the production build of React, whatever NODE_ENV the caller has (vitest runs the build script
  // with NODE_ENV=test, which would otherwise bundle React's development build: 60 kB more, gzipped).
  define: command === 'build' ? { 'process.env.NODE_ENV': JSON.stringify('production') } : {},
  base: '/',
  logLevel: 'warn',
  // Never esbuild's development JSX (jsxDEV), which Vite picks when NODE_ENV is not 'production' (vitest sets 'test'):
  // with React's production build defined above, jsxDEV would be undefined and every page would throw.
  esbuild: { jsx: 'automatic', jsxDev: false },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The initial bundle must stay under 300 kB gzipped (docs/decisions.md, The web console); a test measures it.
    chunkSizeWarningLimit: 600,
    modulePreload: { polyfill: false },
    rollupOptions: {
      // React Server Components' "use client" markers in react-router and TanStack Query mean nothing in a SPA.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/mcp/': 'http://127.0.0.1:8080' } },
}));
