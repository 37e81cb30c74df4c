/**
 * What every importer of `agp evals gate` produces, and the error it throws on a malformed file. A results file is
 * read into {@link ImportedResults}: scenario results in the shape of `EvalScenarioResultSchema` (the body of
 * `POST /api/v1/evals/`), plus what the file says about the run (suite, agent, branch…). The gate then builds and
 * validates the submission with `SubmitEvalRunSchema` (`gate.ts`). Source: docs/evals-gate.md; `@agp/contracts` evals.
 */
import type { z } from 'zod';
import type { EvalScenarioResultSchema, SubmitEvalRunSchema } from '@agp/contracts';

/** The results formats the gate reads: our own JSON, promptfoo's JSON (or JSONL) output, JUnit XML. */
export const RESULTS_FORMATS = ['agp', 'promptfoo', 'junit'] as const;
/** One of {@link RESULTS_FORMATS}. */
export type ResultsFormat = (typeof RESULTS_FORMATS)[number];

/** A scenario result as an importer yields it: the input shape of `EvalScenarioResultSchema` (defaults not applied). */
export type ScenarioInput = z.input<typeof EvalScenarioResultSchema>;

/** The run-level fields a results file may carry (our own format carries any of the submission's fields). */
export type RunFields = Partial<Omit<z.input<typeof SubmitEvalRunSchema>, 'scenarios'>>;

/**
 * A results file, read. `scenarios[i]` came from the file's entry `locate(i)` (e.g. `results.results[4]`,
 * `scenarios[2]`, `line 17`), so a later validation error can name it.
 */
export interface ImportedResults {
  /** The format the file was read as. */
  format: ResultsFormat;
  /** Scenario results, in file order; names are unique (importers disambiguate repeats and say so in `notes`). */
  scenarios: ScenarioInput[];
  /** What the file says about the run: suite, agent_id, branch, commit_sha, threshold… (absent fields: nothing said). */
  run: RunFields;
  /** Entries left out of the run, e.g. JUnit `<skipped/>` test cases. */
  skipped: number;
  /** Remarks for the reader (printed as `note:` lines): renamed duplicates, skipped entries, the mapping applied. */
  notes: string[];
  /**
   * Doubts about the file's meaning (printed as `warning:` lines, and in `--json` as `warnings`): e.g. promptfoo's JUnit
   * report, which carries no metadata, so benign tests count as attacks. None when absent.
   */
  warnings?: string[];
  /** Where scenario `i` is in the file, for error messages: a JSON path (`results.results[3]`) or `line 12`. */
  locate: (i: number) => string;
}

/** Options shared by the importers. */
export interface ImportOptions {
  /** The file's name as the user gave it; prefixes every error message. */
  file: string;
  /** The expectation of scenarios whose file states none (promptfoo `metadata.expected`, JUnit property `expected`). @default 'block' */
  defaultExpected?: 'block' | 'allow';
}

/**
 * A results file that cannot be read: its message names the file and the entry or line, e.g.
 * `results.json: results.results[3].gradingResult.pass: Invalid input: expected boolean, received string` or
 * `report.xml: line 12: <testcase> has no name attribute`. The gate exits 3 on it.
 */
export class ResultsParseError extends Error {
  override readonly name = 'ResultsParseError';
  constructor(
    /** The file, as given on the command line. */
    readonly file: string,
    /** The entry (a JSON path) or the line (`line 12`, `line 12, column 4`) at fault; empty for the whole file. */
    readonly where: string,
    /** What is wrong there. */
    readonly problem: string,
  ) {
    super(`${file}: ${where ? `${where}: ` : ''}${problem}`);
  }
}

/**
 * A JSON path in the notation of the error messages: `results.results[3].gradingResult` from
 * `['results', 'results', 3, 'gradingResult']`; `prefix` is prepended (`scenarios` + `[2].status`).
 */
export function jsonPath(path: ReadonlyArray<PropertyKey>, prefix = ''): string {
  let out = prefix;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

/** The 1-based line and column of character offset `index` in `text`. */
export function lineAndColumn(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < index && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: index - start + 1 };
}

/**
 * `JSON.parse`, throwing a {@link ResultsParseError} that names the line and column of a syntax error (found by
 * {@link jsonErrorOffset}: Node 20's messages rarely carry a position). `lineOffset` shifts the line numbers (a JSONL
 * line).
 */
export function parseJson(text: string, file: string, lineOffset = 0): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = lineAndColumn(text, jsonErrorOffset(text));
    const clean = message.replace(/\s*\(line \d+ column \d+\)/, '').replace(/\s*(in JSON )?at position \d+.*$/, '');
    throw new ResultsParseError(file, `line ${at.line + lineOffset}, column ${at.column}`, `invalid JSON: ${clean}`);
  }
}

/**
 * The character offset of the first JSON syntax error in `text` (RFC 8259 grammar), or `text.length` when the text
 * ends too early. Only called once `JSON.parse` has failed, to place the error.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    for (const ch of word) if (text[i++] !== ch) (i--, fail());
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) ((i += k), fail());
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) fail();
      }
      i++;
    }
    if (i >= text.length) fail();
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || !m[0] || m[0] === '-') fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail();
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail();
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    fail();
  };
  try {
    value();
    ws();
    return i < text.length ? i : text.length;
  } catch (at) {
    return Math.min(typeof at === 'number' ? at : 0, text.length);
  }
}

/** The shape of a zod error's first issues as `path: message` lines, at most `max`. */
export function zodIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>, prefix: string, max = 5): Array<{ where: string; message: string }> {
  return issues.slice(0, max).map((i) => ({ where: jsonPath(i.path, prefix), message: i.message }));
}

/** Make scenario names unique within a run: the second `x` becomes `x (2)`, and so on; returns how many were renamed. */
export function uniquifyNames(scenarios: ScenarioInput[]): number {
  const seen = new Map<string, number>();
  const taken = new Set(scenarios.map((s) => s.name));
  let renamed = 0;
  for (const s of scenarios) {
    const n = (seen.get(s.name) ?? 0) + 1;
    seen.set(s.name, n);
    if (n === 1) continue;
    const base = clampText(s.name, 500);
    let k = n;
    let candidate = `${base} (${k})`;
    while (taken.has(candidate)) candidate = `${base} (${++k})`;
    taken.add(candidate);
    s.name = candidate;
    renamed++;
  }
  return renamed;
}

/** `text` cut to `max` characters (the last one an ellipsis when cut). */
export function clampText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
