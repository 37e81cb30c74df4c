/**
 * The entry of every AGP process (`services/<name>/dist/main.js`, built by scripts/build.mjs): start trace export when
 * it is configured ({@link startTracing}; nothing is loaded when it is not), then import the application bundle beside
 * it (`dist/app.js`). Tracing has to start first: its PostgreSQL instrumentation patches `pg` as the application loads
 * it (CommonJS, so the require hook patches it even when the ESM bundle imports it, and no ESM loader hook is needed;
 * the HTTP server spans are AGP's own, ./http-span.ts). On exit the spans still buffered are exported (the process's own shutdown runs first).
 * Source: architecture §5 (operations), docs/operations.md (Tracing).
 */
import { startTracing } from './tracing.js';

/** The process's default `service.name` (`agp` for the embedded platform, `agp-<service>` otherwise), set by the build. */
declare const AGP_TRACE_SERVICE_NAME: string;

const tracing = await startTracing(AGP_TRACE_SERVICE_NAME);
if (tracing) {
  // The application exits through process.exit after its ordered shutdown; flush what is buffered first.
  const exit = process.exit.bind(process);
  let flushing = false;
  process.exit = ((code?: number) => {
    if (flushing) return exit(code);
    flushing = true;
    void Promise.race([tracing.shutdown(), new Promise((resolve) => setTimeout(resolve, 2000).unref())]).finally(() => exit(code));
  }) as typeof process.exit;
}
await import(new URL('./app.js', import.meta.url).href);
