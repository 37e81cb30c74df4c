/**
 * Where the `agp evals` commands (`gate` in `./command.ts`, `run` in `./run.ts`) read their environment and write.
 * Its own module so that both commands import it without importing each other.
 */

/** Where the command reads its environment and writes (the CLI's `CliIo`). */
export interface EvalsIo {
  /** Environment: AGP_URL, AGP_KEY (or AGP_API_KEY), and the CI variables read by `detectCi`. */
  env: Record<string, string | undefined>;
  /** The directory whose git branch an upload without one is filed under. @default process.cwd() */
  cwd?: string;
  out: (text: string) => void;
  err: (text: string) => void;
}
