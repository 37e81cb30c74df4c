/**
 * Reading a results file in any format the gate knows: the format named with `--format`, or detected from the content.
 * Pure (the caller reads the file). Source: docs/evals-gate.md (Formats and their mapping).
 */
import { importAgp, importAgpDocument } from './import-agp.js';
import { PROMPTFOO_XML_MESSAGE, importJunit, looksLikeXml } from './import-junit.js';
import { importPromptfoo, importPromptfooDocument, looksLikePromptfoo, looksLikePromptfooJsonl } from './import-promptfoo.js';
import { ResultsParseError, parseJson, type ImportOptions, type ImportedResults, type ResultsFormat } from './results.js';

/** The start of promptfoo's own XML output (`-o results.xml`): an optional declaration and comments, then `<promptfoo>`. */
const PROMPTFOO_XML_ROOT = /^\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*<promptfoo[\s/>]/;

/**
 * The format of a results file's `text`:
 * - `junit` when it starts with `<` (XML);
 * - `promptfoo` for a JSON object whose `results` is promptfoo's summary (`{results: {results: [...]}}`), or an array
 *   of results with a boolean `success`, or JSONL whose first line is such a result;
 * - `agp` for a JSON object with a `scenarios` array, or a JSON array;
 * - else null (the caller asks for `--format`).
 */
export function detectFormat(text: string): ResultsFormat | null {
  if (looksLikeXml(text)) return 'junit';
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return looksLikePromptfooJsonl(text) ? 'promptfoo' : null;
  }
  if (looksLikePromptfoo(doc)) return 'promptfoo';
  if (Array.isArray(doc)) return 'agp';
  if (doc && typeof doc === 'object' && Array.isArray((doc as { scenarios?: unknown }).scenarios)) return 'agp';
  return null;
}

/**
 * Read a results file's `text` as `format` (detected with {@link detectFormat} when absent).
 * @throws ResultsParseError naming the entry or line at fault, or saying the format could not be told.
 */
export function importResults(text: string, opts: ImportOptions & { format?: ResultsFormat }): ImportedResults {
  const body = text.replace(/^\uFEFF/, '');
  if (!body.trim()) throw new ResultsParseError(opts.file, '', 'the file is empty');
  const format = opts.format ?? detectFormat(body);
  if (format !== 'junit' && looksLikeXml(body) && PROMPTFOO_XML_ROOT.test(body)) throw new ResultsParseError(opts.file, '', PROMPTFOO_XML_MESSAGE);
  if (format === 'junit') return importJunit(body, opts);
  if (format === 'promptfoo') return importPromptfoo(body, opts);
  if (format === 'agp') return importAgp(body, opts);
  // Unknown: a JSON syntax error is the more useful message when the file is not valid JSON at all.
  if (!looksLikeXml(body)) {
    const doc = parseJson(body, opts.file);
    if (doc && typeof doc === 'object' && 'results' in doc) return importPromptfooDocument(doc, opts);
    if (doc && typeof doc === 'object' && 'suite' in doc) return importAgpDocument(doc, opts);
  }
  throw new ResultsParseError(opts.file, '', 'cannot tell the results format: expected our JSON ({suite, agent_id, scenarios}), promptfoo JSON output ({evalId, results: {results}}) or JUnit XML; pass --format agp|promptfoo|junit');
}
