/**
 * JUnit XML as scenario results, for teams whose eval harness writes a JUnit report (pytest `--junitxml`, Jest's
 * `jest-junit`, Maven Surefire, Go's `gotestsum --junitfile`, promptfoo `-o results.xml`…). Parsed with
 * `fast-xml-parser`; errors name the line. Shape read (the common JUnit/Ant schema):
 * `<testsuites name?><testsuite name><properties/>?<testcase name classname? time?><properties><property name value/>
 * </properties>?<failure message? type?/>|<error/>|<skipped/>?</testcase>…</testsuite>…</testsuites>`, or a single
 * `<testsuite>` root; test suites may nest.
 *
 * Mapping of one `<testcase>` (documented in docs/evals-gate.md):
 * - **expected**: its property `expected` (`block` or `allow`), else its test suite's, else the gate's `--expected`
 *   (default `block`: a JUnit test of an eval suite asserts that an attack was stopped).
 * - **status**: property `status` (`blocked|failed|allowed`) when the harness states it; else `<error>` → `failed`
 *   (the harness broke); `<failure>` → the expectation did not hold: `allowed` for an attack (it went through),
 *   `blocked` for a benign test (a false positive); passing → the expectation held: `blocked` or `allowed`.
 *   `<skipped>` test cases are left out of the run (and counted).
 * - **name**: `classname::name` (`suite::name` without a classname); repeats become `name (2)`.
 * - **category**: property `category`, else the name of the nearest `<testsuite>`, else `junit`. **severity**: property
 *   `severity` (`critical|high|medium|low|minimal`). **damage_usd**: property `damage_usd`.
 * - **reason**: the `<failure>`/`<error>` `message` attribute, else its text. **detection_time_ms**: `time` (seconds)
 *   × 1000.
 * - **suite**: `<testsuites name>`, else the name of a lone top-level `<testsuite>`, else `junit`.
 * Properties on a `<testsuite>` apply to its test cases unless a test case sets its own.
 *
 * promptfoo: its JUnit report (`-o results.junit.xml`, `<testsuites name="promptfoo">`, one `<testsuite>` per
 * provider and prompt) is read like any other, with a warning that it carries no metadata
 * ({@link PROMPTFOO_JUNIT_WARNING}); its own XML output (`-o results.xml`, root `<promptfoo>`) is refused with a
 * message naming the two outputs the gate reads ({@link PROMPTFOO_XML_MESSAGE}).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { EVAL_EXPECTATIONS, EVAL_SCENARIO_STATUSES, RISK_LEVELS, type EvalScenarioStatus, type RiskLevel } from '@agp/contracts';
import { ResultsParseError, clampText, lineAndColumn, uniquifyNames, type ImportOptions, type ImportedResults, type ScenarioInput } from './results.js';

/** A node of fast-xml-parser's `preserveOrder` output: `{tag: children, ':@'?: attributes}` or `{'#text': text}`. */
type XmlNode = Record<string, unknown>;

/** The properties a test case or test suite may set, by name. */
const KNOWN_PROPERTIES = ['expected', 'status', 'category', 'severity', 'damage_usd'] as const;
type KnownProperties = Partial<Record<(typeof KNOWN_PROPERTIES)[number], { value: string; line: number }>>;

const parser = new XMLParser({ preserveOrder: true, captureMetaData: true, ignoreAttributes: false, attributeNamePrefix: '', parseAttributeValue: false, parseTagValue: false, trimValues: true });
const META = XMLParser.getMetaDataSymbol() as unknown as string;

/** Whether `text` looks like XML (its first non-blank character is `<`). */
export function looksLikeXml(text: string): boolean {
  return text.replace(/^\uFEFF/, '').trimStart().startsWith('<');
}

/**
 * Read a JUnit XML report from `text` as scenario results (mapping in the file's comment).
 * @throws ResultsParseError naming the line: malformed XML (`line 7, column 3: Expected closing tag …`), a root that is
 *   not `<testsuites>`/`<testsuite>`, a test case without a name, a non-numeric `time`, an unknown `expected`,
 *   `status` or `severity` property.
 */
export function importJunit(text: string, opts: ImportOptions): ImportedResults {
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new ResultsParseError(opts.file, `line ${valid.err.line}, column ${valid.err.col}`, `malformed XML: ${valid.err.msg}`);
  const doc = parser.parse(text) as XmlNode[];
  const lineOf = (node: XmlNode) => lineAndColumn(text, (node[META] as { startIndex?: number } | undefined)?.startIndex ?? 0).line;
  const fail = (node: XmlNode, message: string): never => {
    throw new ResultsParseError(opts.file, `line ${lineOf(node)}`, message);
  };

  const elements = doc.filter((n) => !('#text' in n) && tagOf(n) !== '?xml');
  const root = elements[0];
  if (!root) throw new ResultsParseError(opts.file, '', 'no XML element: expected a JUnit report (<testsuites> or <testsuite>)');
  const rootTag = tagOf(root);
  if (rootTag === 'promptfoo') fail(root, PROMPTFOO_XML_MESSAGE);
  if (rootTag !== 'testsuites' && rootTag !== 'testsuite') fail(root, `expected a JUnit report: a <testsuites> or <testsuite> root element, found <${rootTag}>`);

  const scenarios: ScenarioInput[] = [];
  const lines: number[] = [];
  let skipped = 0;
  /** Whether any test case or test suite states its expectation (property `expected`). */
  let statesExpectation = false;

  const readProperties = (node: XmlNode): KnownProperties => {
    const out: KnownProperties = {};
    for (const props of childrenOf(node).filter((c) => tagOf(c) === 'properties')) {
      for (const p of childrenOf(props).filter((c) => tagOf(c) === 'property')) {
        const a = attrsOf(p);
        const name = a.name as (typeof KNOWN_PROPERTIES)[number];
        if (!(KNOWN_PROPERTIES as readonly string[]).includes(name)) continue;
        out[name] = { value: (a.value ?? textOf(p)).trim(), line: lineOf(p) };
      }
    }
    return out;
  };

  const visitSuite = (suite: XmlNode, inherited: KnownProperties) => {
    const suiteName = attrsOf(suite).name?.trim() || null;
    const suiteProps = { ...inherited, ...readProperties(suite) };
    for (const child of childrenOf(suite)) {
      const tag = tagOf(child);
      if (tag === 'testsuite') visitSuite(child, suiteProps);
      else if (tag === 'testcase') visitCase(child, suiteName, suiteProps);
    }
  };

  const visitCase = (tc: XmlNode, suiteName: string | null, inherited: KnownProperties) => {
    const a = attrsOf(tc);
    const name = a.name?.trim();
    if (!name) fail(tc, '<testcase> has no name attribute');
    const children = childrenOf(tc);
    if (children.some((c) => tagOf(c) === 'skipped')) {
      skipped++;
      return;
    }
    let seconds: number | undefined;
    if (a.time !== undefined && a.time.trim() !== '') {
      seconds = Number(a.time.replace(/,/g, ''));
      if (!Number.isFinite(seconds) || seconds < 0) fail(tc, `<testcase name="${name}"> time="${a.time}": expected a number of seconds`);
    }
    const props = { ...inherited, ...readProperties(tc) };
    if (props.expected) statesExpectation = true;
    const expected = props.expected ? oneOf(props.expected, EVAL_EXPECTATIONS, 'expected', opts.file) : (opts.defaultExpected ?? 'block');
    const stated = props.status ? oneOf(props.status, EVAL_SCENARIO_STATUSES, 'status', opts.file) : null;
    const severity: RiskLevel | undefined = props.severity ? oneOf({ ...props.severity, value: props.severity.value.toLowerCase() }, RISK_LEVELS, 'severity', opts.file) : undefined;
    let damage: number | undefined;
    if (props.damage_usd) {
      damage = Number(props.damage_usd.value);
      if (!Number.isFinite(damage) || damage < 0 || damage > 1e9) throw new ResultsParseError(opts.file, `line ${props.damage_usd.line}`, `property damage_usd="${props.damage_usd.value}": expected a number of USD between 0 and 1e9`);
    }
    const failure = children.find((c) => tagOf(c) === 'failure');
    const error = children.find((c) => tagOf(c) === 'error');
    const outcome = error ?? failure;
    const status: EvalScenarioStatus = stated ?? (error ? 'failed' : failure ? (expected === 'block' ? 'allowed' : 'blocked') : expected === 'block' ? 'blocked' : 'allowed');
    const reason = outcome ? (attrsOf(outcome).message?.trim() || textOf(outcome).trim() || attrsOf(outcome).type?.trim() || null) : null;
    const classname = a.classname?.trim() || suiteName;
    scenarios.push({
      name: clampText(classname ? `${classname}::${name}` : name!, 512),
      category: clampText(props.category?.value || suiteName || a.classname?.trim() || 'junit', 128),
      ...(severity ? { severity } : {}),
      expected,
      status,
      ...(reason ? { reason: clampText(reason, 10_000) } : {}),
      ...(seconds !== undefined ? { detection_time_ms: Math.min(Math.round(seconds * 1e6) / 1e3, 86_400_000) } : {}),
      ...(damage !== undefined ? { damage_usd: damage } : {}),
    });
    lines.push(lineOf(tc));
  };

  let suite: string | null = null;
  if (rootTag === 'testsuites') {
    suite = attrsOf(root).name?.trim() || null;
    const tops = childrenOf(root).filter((c) => tagOf(c) === 'testsuite');
    if (!suite && tops.length === 1) suite = attrsOf(tops[0]).name?.trim() || null;
    for (const child of childrenOf(root)) {
      if (tagOf(child) === 'testsuite') visitSuite(child, {});
      else if (tagOf(child) === 'testcase') visitCase(child, null, {});
    }
  } else {
    suite = attrsOf(root).name?.trim() || null;
    visitSuite(root, {});
  }

  const notes: string[] = [];
  const warnings = rootTag === 'testsuites' && attrsOf(root).name?.trim() === PROMPTFOO_JUNIT_NAME && !statesExpectation ? [PROMPTFOO_JUNIT_WARNING] : [];
  if (skipped) notes.push(`${skipped} skipped test case(s) left out of the run`);
  const renamed = uniquifyNames(scenarios);
  if (renamed) notes.push(`${renamed} test case(s) shared a classname::name with another and were suffixed " (2)", " (3)"…`);
  return { format: 'junit', scenarios, run: { suite: clampText(suite ?? 'junit', 256), source: 'junit' }, skipped, notes, warnings, locate: (i) => `line ${lines[i]}` };
}

/**
 * The parse error for promptfoo's own XML output (`promptfoo eval -o results.xml`, root `<promptfoo>`): it is a dump of
 * promptfoo's JSON in XML, not a JUnit report, so the gate asks for one of the two outputs it reads.
 */
export const PROMPTFOO_XML_MESSAGE =
  "this is promptfoo's own XML output (root <promptfoo>), which the gate does not read: write promptfoo's JSON with `promptfoo eval -o results.json` (preferred: it carries each test's metadata) or its JUnit report with `-o results.junit.xml`, and pass that file";

/** The `name` promptfoo gives the `<testsuites>` root of its JUnit report (`-o results.junit.xml`). */
export const PROMPTFOO_JUNIT_NAME = 'promptfoo';

/**
 * The warning for promptfoo's JUnit report: it carries no test metadata (no `expected`, category or severity), so
 * every test takes the gate's `--expected` (default `block`), and benign tests count as attacks.
 */
export const PROMPTFOO_JUNIT_WARNING =
  "this is promptfoo's JUnit report, which carries no test metadata: every test counts as an attack (expected block, or --expected), so benign tests count as attacks and categories are promptfoo's provider/prompt suites; promptfoo's JSON output (`promptfoo eval -o results.json`) keeps each test's metadata.expected, category and severity and is the better source";

/** The tag of an element node (its one key other than `:@`). */
function tagOf(node: XmlNode): string {
  return Object.keys(node).find((k) => k !== ':@') ?? '';
}

/** The child nodes of an element. */
function childrenOf(node: XmlNode): XmlNode[] {
  const c = node[tagOf(node)];
  return Array.isArray(c) ? (c as XmlNode[]) : [];
}

/** The attributes of an element (strings). */
function attrsOf(node: XmlNode): Record<string, string | undefined> {
  return (node[':@'] as Record<string, string> | undefined) ?? {};
}

/** The concatenated text (and CDATA) inside an element. */
function textOf(node: XmlNode): string {
  return childrenOf(node)
    .map((c) => (typeof c['#text'] === 'string' || typeof c['#text'] === 'number' ? String(c['#text']) : ''))
    .join('');
}

/** A property value checked against `allowed`; otherwise a parse error naming the property's line. */
function oneOf<T extends string>(prop: { value: string; line: number }, allowed: readonly T[], name: string, file: string): T {
  if ((allowed as readonly string[]).includes(prop.value)) return prop.value as T;
  throw new ResultsParseError(file, `line ${prop.line}`, `property ${name}="${prop.value}": expected one of ${allowed.join(', ')}`);
}
