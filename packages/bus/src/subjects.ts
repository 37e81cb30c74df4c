/**
 * NATS subject names. Every AGP subject is `<prefix>.<pattern>`, where the prefix comes from
 * `AGP_SUBJECT_PREFIX` (default `agp`) so that test runs sharing one NATS server never cross.
 * Subjects are lowercase and go from broad to specific: `agp.interventions.list`,
 * `agp.ingested.<org>.interventions`. Source: architecture §1, style guide (Names).
 */

const SAFE_TOKEN = /^[A-Za-z0-9_-]+$/;
const PREFIX = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * Make any string safe as exactly one NATS subject token, injectively: `[A-Za-z0-9_-]` stay as they
 * are, every other UTF-8 byte (including `.`, `*`, `>`, whitespace and `~` itself) becomes `~xx`
 * (two lowercase hex digits). `acme` → `acme`, `a.b` → `a~2eb`, `` (empty) → `~`.
 * Used for organisation ids, which are opaque strings of 1 to 256 characters (architecture §4).
 */
export function subjectToken(value: string): string {
  if (value.length === 0) return '~';
  if (SAFE_TOKEN.test(value)) return value;
  let out = '';
  for (const ch of value) {
    if (SAFE_TOKEN.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `~${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/**
 * Check a subject prefix (`agp`, `t1a2b3.agp`): dot-separated tokens of `[A-Za-z0-9_-]`.
 * @throws Error when it is not a valid prefix.
 */
export function assertSubjectPrefix(prefix: string): string {
  if (!PREFIX.test(prefix)) throw new Error(`invalid subject prefix ${JSON.stringify(prefix)}: use dot-separated [A-Za-z0-9_-] tokens`);
  return prefix;
}

/** `<prefix>.<pattern>`, e.g. `prefixedSubject('agp', 'interventions.list')` → `agp.interventions.list`. */
export function prefixedSubject(prefix: string, pattern: string): string {
  return `${prefix}.${pattern}`;
}

/**
 * Subject of an ingest message: `${prefix}.ingested.${subjectToken(org)}.${kind}`. (Not `.ingest.`: the
 * request/reply subject `${prefix}.ingest.batch` must never be captured by the JetStream stream.)
 * `kind` names the consumer-facing target (e.g. `interventions`); the consumer filters on
 * `${prefix}.ingested.*.${kind}` ({@link ingestFilter}). Source: architecture §1, §4 (Ingest).
 * @throws Error when `kind` is not one safe token (it comes from code, never from input).
 */
export function ingestSubject(prefix: string, org: string, kind: string): string {
  if (!SAFE_TOKEN.test(kind)) throw new Error(`invalid ingest kind ${JSON.stringify(kind)}`);
  return `${prefix}.ingested.${subjectToken(org)}.${kind}`;
}

/** Filter that matches every ingest subject of a prefix: `${prefix}.ingested.>` (the JetStream stream's subjects). */
export function ingestSubjects(prefix: string): string {
  return `${prefix}.ingested.>`;
}

/** Filter of one target service's ingest messages, all organisations: `${prefix}.ingested.*.${kind}`. */
export function ingestFilter(prefix: string, kind: string): string {
  if (!SAFE_TOKEN.test(kind)) throw new Error(`invalid ingest kind ${JSON.stringify(kind)}`);
  return `${prefix}.ingested.*.${kind}`;
}

/**
 * Translate a NATS subject filter (`*` = one token, `>` = one or more trailing tokens) into an anchored
 * POSIX regular expression, for adapters that store subjects in SQL (`subject ~ $1`).
 * @throws Error when `>` is not the last token or a token is empty.
 */
export function subjectFilterToRegex(filter: string): string {
  const tokens = filter.split('.');
  const parts = tokens.map((t, i) => {
    if (t === '') throw new Error(`invalid subject filter ${JSON.stringify(filter)}: empty token`);
    if (t === '*') return '[^.]+';
    if (t === '>') {
      if (i !== tokens.length - 1) throw new Error(`invalid subject filter ${JSON.stringify(filter)}: '>' must be last`);
      return '.+';
    }
    return t.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
  });
  return `^${parts.join('\\.')}$`;
}
