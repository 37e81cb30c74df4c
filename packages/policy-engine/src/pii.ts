/**
 * The personal-data (PII) scanner of the `pii` guardrail: finds emails, phone numbers, payment cards, IBANs, US social
 * security numbers, IP addresses and secrets in every string of an action's arguments, nested objects and arrays
 * included. Pure; every regex is compiled once at load, nothing is set up per call.
 * Source: spec §Guardrail context payload; architecture §1 (packages/policy-engine).
 *
 * How each category is recognised (a candidate regex, then a validator, so that look-alikes are not reported):
 * - `email`: local@domain.tld (bounded lengths, so the regex cannot backtrack for long).
 * - `phone`: a run of digits with separators or a leading `+`, valid for its country by libphonenumber-js (full
 *   metadata; a number without `+` is read as a US number). A bare digit run (an order id, a timestamp) is not a
 *   phone number: it needs a `+`, a space, a dash, a dot or parentheses.
 * - `payment_card`: 13–19 digits (spaces or dashes between them allowed) starting with 2–6 (the card networks'
 *   ranges) that pass the Luhn check.
 * - `iban`: a country code, two check digits and 11–30 letters or digits (spaces allowed every character), valid
 *   by its ISO 13616 mod-97 checksum and country length (ibantools).
 * - `us_ssn`: AAA-GG-SSSS with dashes, without the never-issued areas 000, 666 and 900–999, group 00 or serial 0000.
 * - `ip_address`: dotted IPv4 or IPv6 that `node:net` `isIP` accepts.
 * - `secret`: a well-known key prefix (OpenAI/Anthropic `sk-`, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`,
 *   AWS `AKIA`/`ASIA`, Slack `xox?-`, Stripe `sk_live_`/`rk_live_`, Google `AIza`, GitLab `glpat-`, JWTs, PEM private
 *   keys), or a high-entropy token: a run of 32–512 characters of `[A-Za-z0-9+_=-]` mixing upper case, lower case and digits
 *   whose Shannon entropy is at least {@link SECRET_ENTROPY_BITS} bits per character (hex digests such as commit hashes
 *   and UUIDs stay below it: 16 symbols give at most 4 bits).
 * Names are not detected: no regex can tell a person's name from two capitalised words.
 *
 * Bounds: the walk is iterative (arguments nested 10,000 deep do not overflow the stack). It visits at most
 * {@link PII_MAX_VALUES} values and {@link PII_MAX_CHARS} characters of strings and reports at most
 * {@link PII_MAX_MATCHES} matches; past a bound the scan stops and says so (`truncated`). Field paths longer than
 * 1024 characters keep their last 1023 characters after a leading `…`.
 */
import { isIP } from 'node:net';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { PiiCategory } from '@agp/contracts';

/** Minimum Shannon entropy (bits per character) for an unprefixed 32+ character token to count as a secret. */
export const SECRET_ENTROPY_BITS = 4.2;
/** Most values (strings, numbers, containers…) one scan visits. */
export const PII_MAX_VALUES = 100_000;
/** Most string characters one scan reads. */
export const PII_MAX_CHARS = 1_048_576;
/** Most matches one scan reports. */
export const PII_MAX_MATCHES = 1000;
/** Longest field path reported (the context payload's bound). */
const MAX_PATH = 1024;

/** One PII match: its category, where (dotted path with array indices) and the text masked. */
export interface PiiMatch {
  category: PiiCategory;
  field_path: string;
  /** The matched text partly masked; never the raw value. */
  matched_text: string;
}

/** What one scan found. */
export interface PiiScan {
  matches: PiiMatch[];
  /** True when a bound stopped the scan early (later values were not scanned). */
  truncated: boolean;
}

/** One match inside a string: `[start, end)` in UTF-16 code units, and its category. */
export interface PiiSpan {
  start: number;
  end: number;
  category: PiiCategory;
}

/** The domain of an email, matched from just after the `@` (sticky). */
const EMAIL_DOMAIN = /(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/y;
/** Characters of an email's local part. */
const LOCAL_CHAR = /[A-Za-z0-9._%+-]/;
const PHONE = /(?:\+\d|\(\d|(?<![\w.+-])\d)[\d ().-]{5,20}\d(?![\w])/g;
const CARD = /(?<![\w.-])[2-6]\d(?:[ -]?\d){11,17}(?![\w])/g;
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])/g;
const SSN = /(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w-])/g;
const IPV4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])/g;
const IPV6 = /(?<![\w:.])[0-9A-Fa-f]{0,4}:[0-9A-Fa-f:.]{2,44}(?![\w:])/g;
const SECRET_PREFIXED = new RegExp(
  [
    String.raw`\bsk-(?:proj-|ant-|live-)?[A-Za-z0-9_-]{20,}`,
    String.raw`\bgh[pousr]_[A-Za-z0-9]{30,}`,
    String.raw`\bgithub_pat_[A-Za-z0-9_]{22,}`,
    String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
    String.raw`\bxox[abposr]-[A-Za-z0-9-]{10,}`,
    String.raw`\b[rs]k_live_[A-Za-z0-9]{16,}`,
    String.raw`\bAIza[0-9A-Za-z_-]{35}`,
    String.raw`\bglpat-[A-Za-z0-9_-]{20,}`,
    String.raw`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`,
    String.raw`-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----`,
  ].join('|'),
  'g',
);
const HAS_DIGIT = /\d/;
const DIGITS = /\d/g;
/** Cheap tests that let a string skip a category's dearer regex: a digit-dot-digit, a hex-colon-hex, a key prefix. */
const MAYBE_IPV4 = /\d\.\d/;
const MAYBE_IPV6 = /[0-9A-Fa-f:]:[0-9A-Fa-f:]/;
const MAYBE_PREFIXED = /sk-|gh[pousr]_|github_pat_|AKIA|ASIA|xox|k_live_|AIza|glpat-|eyJ|-----BEGIN/;

/** Shannon entropy of `s` in bits per character. */
export function shannonEntropy(s: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Whether a digit string passes the Luhn (mod 10) check. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/**
 * `text` partly masked: a payment card keeps its last 4 digits; anything else keeps its first 2 and last 2
 * characters (nothing for 6 characters or fewer), the rest `*` (at most 12 of them). Characters are code points, so
 * a masked string never holds half of a surrogate pair (which PostgreSQL cannot store).
 */
export function maskText(text: string, category?: PiiCategory): string {
  if (category === 'payment_card') {
    const digits = text.replace(/\D/g, '');
    return `${'*'.repeat(Math.min(12, digits.length - 4))}${digits.slice(-4)}`;
  }
  const chars = Array.from(text);
  if (chars.length <= 6) return '*'.repeat(chars.length);
  return `${chars.slice(0, 2).join('')}${'*'.repeat(Math.min(12, chars.length - 4))}${chars.slice(-2).join('')}`;
}

/** Whether [start, end) overlaps a span already found. */
function overlaps(spans: PiiSpan[], start: number, end: number): boolean {
  for (const s of spans) if (start < s.end && s.start < end) return true;
  return false;
}

/** Run `re` over `text`, adding each match `accept` approves (and that overlaps no earlier one) as `category`. */
function collect(re: RegExp, text: string, category: PiiCategory, spans: PiiSpan[], accept: (m: RegExpExecArray) => boolean): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    if (!overlaps(spans, start, end) && accept(m)) spans.push({ start, end, category });
  }
}

/**
 * Add the emails of `text`: from each `@`, the local part is read backwards (at most 64 characters) and the domain
 * matched forwards; far cheaper than a regex that tries a 64-character local part at every position.
 */
function collectEmails(text: string, spans: PiiSpan[]): void {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && LOCAL_CHAR.test(text[start - 1])) start--;
    if (start === at) continue;
    EMAIL_DOMAIN.lastIndex = at + 1;
    const m = EMAIL_DOMAIN.exec(text);
    if (m === null) continue;
    const end = at + 1 + m[0].length;
    if (!overlaps(spans, start, end)) spans.push({ start, end, category: 'email' });
  }
}

const validSsn = (m: RegExpExecArray) => {
  const area = m[1];
  return area !== '000' && area !== '666' && area[0] !== '9' && m[2] !== '00' && m[3] !== '0000';
};
const validCard = (m: RegExpExecArray) => {
  const digits = m[0].replace(/[ -]/g, '');
  return digits.length >= 13 && digits.length <= 19 && luhnValid(digits);
};
const validIban = (m: RegExpExecArray) => {
  const e = electronicFormatIBAN(m[0]);
  return e !== null && isValidIBAN(e);
};
/** Most verdicts {@link phoneVerdicts} keeps before it starts over. */
const PHONE_MEMO_SIZE = 4096;
/**
 * libphonenumber-js's verdict per phone candidate text (valid or not). Its validation costs ~45 µs per candidate
 * (it compiles its metadata's patterns on every call) while an agent sends the same texts again and again (a
 * conversation's earlier messages with every call): the verdict of a text already seen is looked up. A pure
 * function's memo: the verdicts are the same.
 */
const phoneVerdicts = new Map<string, boolean>();
const validPhone = (m: RegExpExecArray) => {
  const t = m[0];
  if (t[0] !== '+' && !/[ ().-]/.test(t)) return false;
  const digits = t.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15) return false;
  let valid = phoneVerdicts.get(t);
  if (valid === undefined) {
    const p = parsePhoneNumberFromString(t, 'US');
    valid = p !== undefined && p.isValid();
    if (phoneVerdicts.size >= PHONE_MEMO_SIZE) phoneVerdicts.clear();
    phoneVerdicts.set(t, valid);
  }
  return valid;
};
/** Whether a character code may be part of a token (`[A-Za-z0-9+_=-]`); bit 1 upper, 2 lower, 4 digit, 8 other. */
function tokenClass(c: number): number {
  if (c >= 65 && c <= 90) return 1;
  if (c >= 97 && c <= 122) return 2;
  if (c >= 48 && c <= 57) return 4;
  return c === 43 || c === 95 || c === 61 || c === 45 ? 8 : 0;
}

/**
 * Add the high-entropy tokens of `text`: each maximal run of `[A-Za-z0-9+_=-]` of 32–512 characters mixing upper
 * case, lower case and digits with entropy ≥ {@link SECRET_ENTROPY_BITS}. One pass over the character codes (a
 * regex with look-arounds cost ~10 µs per 2 KB).
 */
function collectTokens(text: string, spans: PiiSpan[]): void {
  let start = 0;
  let classes = 0;
  for (let i = 0; i <= text.length; i++) {
    const k = i < text.length ? tokenClass(text.charCodeAt(i)) : 0;
    if (k !== 0) {
      if (classes === 0) start = i;
      classes |= k | 16;
      continue;
    }
    if (classes !== 0) {
      const length = i - start;
      if (length >= 32 && length <= 512 && (classes & 7) === 7 && !overlaps(spans, start, i) && shannonEntropy(text.slice(start, i)) >= SECRET_ENTROPY_BITS) {
        spans.push({ start, end: i, category: 'secret' });
      }
      classes = 0;
    }
  }
}

/**
 * The PII spans of one string for the wanted categories, in the order found. Prefixed secrets first (a key can
 * contain digit runs), then email, IBAN, card, SSN, IP, phone, entropy secrets; a later category never claims text an
 * earlier one did.
 */
export function findPii(text: string, wanted: ReadonlySet<PiiCategory>): PiiSpan[] {
  const spans: PiiSpan[] = [];
  // Cheap tests first (a regex or indexOf scan is several times faster than a loop over the characters): most
  // strings hold no digit, and then only emails, prefixed secrets and `::` IPv6 addresses can be in them.
  const digit = HAS_DIGIT.test(text);
  if (text.length >= 20 && wanted.has('secret') && MAYBE_PREFIXED.test(text)) collect(SECRET_PREFIXED, text, 'secret', spans, () => true);
  if (wanted.has('email')) collectEmails(text, spans);
  if (digit) {
    // What the categories need at the least (their regexes and validators accept nothing without it): an IBAN holds
    // 2 check digits; a card 13–19 digits; an SSN 9 and dashes; an IPv4 address 4; a phone number 7–15 (validPhone).
    const digits = digitCount(text);
    if (digits >= 2 && wanted.has('iban') && text.length >= 15) collect(IBAN, text, 'iban', spans, validIban);
    if (digits >= 13 && wanted.has('payment_card')) collect(CARD, text, 'payment_card', spans, validCard);
    if (digits >= 9 && wanted.has('us_ssn')) collect(SSN, text, 'us_ssn', spans, validSsn);
    if (wanted.has('ip_address')) {
      if (digits >= 4 && MAYBE_IPV4.test(text)) collect(IPV4, text, 'ip_address', spans, (m) => isIP(m[0]) === 4);
      if (MAYBE_IPV6.test(text)) collect(IPV6, text, 'ip_address', spans, (m) => isIP(m[0]) === 6);
    }
    if (digits >= 7 && wanted.has('phone')) collect(PHONE, text, 'phone', spans, validPhone);
  } else if (wanted.has('ip_address') && text.includes('::')) collect(IPV6, text, 'ip_address', spans, (m) => isIP(m[0]) === 6);
  if (text.length >= 32 && digit && wanted.has('secret')) collectTokens(text, spans);
  return spans;
}

/** How many ASCII digits `text` holds, counted up to 13 (the most any category's pre-test asks for). */
function digitCount(text: string): number {
  let n = 0;
  DIGITS.lastIndex = 0;
  while (n < 13 && DIGITS.test(text)) n++;
  return n;
}

/** `text` with every PII span of the wanted categories replaced by `[REDACTED:<category>]`. */
export function redactPii(text: string, wanted: ReadonlySet<PiiCategory>): string {
  const spans = findPii(text, wanted).sort((a, b) => a.start - b.start);
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += `${text.slice(at, s.start)}[REDACTED:${s.category}]`;
    at = s.end;
  }
  return out + text.slice(at);
}

/** Where a string sits in the arguments: its parent's place and its key (a property name or an array index). */
export interface StringPlace {
  readonly parent: StringPlace | null;
  readonly key: string;
}

/** The dotted path of a place (`messages.2.content`), cut to {@link MAX_PATH} characters from the end. */
export function fieldPathOf(node: StringPlace): string {
  const parts: string[] = [];
  let length = 0;
  for (let n: StringPlace | null = node; n !== null && length <= MAX_PATH; n = n.parent) {
    parts.push(n.key);
    length += n.key.length + 1;
  }
  const path = parts.reverse().join('.');
  return path.length <= MAX_PATH ? path : `…${path.slice(path.length - (MAX_PATH - 1))}`;
}

/**
 * Visit every string of `args` (nested objects and arrays included; not property names, not `args` itself), depth
 * first, properties in insertion order, with its place ({@link fieldPathOf} turns it into the dotted path; computing
 * it only for the strings that matter keeps a scan cheap). `visit` returns false to stop. Iterative and bounded: at
 * most {@link PII_MAX_VALUES} values and {@link PII_MAX_CHARS} characters of strings.
 * @returns true when a bound stopped the walk early (later strings were not visited); false otherwise, including
 *   when `visit` stopped it.
 */
export function walkStrings(args: unknown, visit: (text: string, place: StringPlace) => boolean): boolean {
  if (args === null || typeof args !== 'object') return false;
  const values: unknown[] = [args];
  const nodes: Array<StringPlace | null> = [null];
  let visited = 0;
  let chars = 0;
  while (values.length > 0) {
    const v = values.pop();
    const node = nodes.pop() ?? null;
    if (++visited > PII_MAX_VALUES) return true;
    if (typeof v === 'string') {
      if (node === null) continue;
      chars += v.length;
      if (chars > PII_MAX_CHARS) return true;
      if (!visit(v, node)) return false;
    } else if (Array.isArray(v)) {
      if (visited + values.length + v.length > PII_MAX_VALUES) return true;
      for (let i = v.length - 1; i >= 0; i--) {
        values.push(v[i]);
        nodes.push({ parent: node, key: String(i) });
      }
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      if (visited + values.length + keys.length > PII_MAX_VALUES) return true;
      for (let i = keys.length - 1; i >= 0; i--) {
        values.push((v as Record<string, unknown>)[keys[i]]);
        nodes.push({ parent: node, key: keys[i] });
      }
    }
  }
  return false;
}

/**
 * Scan every string of `args` (nested objects and arrays included; not property names) for the wanted categories.
 * Iterative, bounded (see the module docs), never throws for JSON-like input.
 * @returns the matches in traversal order (depth first, properties in insertion order) with masked text.
 */
export function scanPii(args: unknown, wanted: ReadonlySet<PiiCategory>): PiiScan {
  const matches: PiiMatch[] = [];
  if (args === null || typeof args !== 'object' || wanted.size === 0) return { matches, truncated: false };
  let full = false;
  const truncated = walkStrings(args, (v, node) => {
    if (v.length < 7) return true;
    const spans = findPii(v, wanted);
    if (spans.length === 0) return true;
    const field_path = fieldPathOf(node);
    for (const s of spans) {
      if (matches.length >= PII_MAX_MATCHES) {
        full = true;
        return false;
      }
      matches.push({ category: s.category, field_path, matched_text: maskText(v.slice(s.start, s.end), s.category) });
    }
    return true;
  });
  return { matches, truncated: truncated || full };
}
