/**
 * The PII scanner: each category against true and false positives, masking (never the raw value), field paths with
 * array indices, redaction, and the bounds (deep and wide input neither throws nor runs away). No I/O.
 */
import { describe, expect, it } from 'vitest';
import { PII_CATEGORIES, type PiiCategory } from '@agp/contracts';
import { findPii, luhnValid, maskText, PII_MAX_MATCHES, PII_MAX_VALUES, redactPii, scanPii, shannonEntropy } from '../src/index.js';

const ALL: ReadonlySet<PiiCategory> = new Set(PII_CATEGORIES);
const categoriesIn = (text: string) => findPii(text, ALL).map((s) => s.category);

describe('findPii: true positives', () => {
  it.each<[PiiCategory, string]>([
    ['email', 'write to jane.doe+billing@example.co.uk today'],
    ['phone', 'call +44 20 7946 0958 after five'],
    ['phone', 'US office: (415) 555-2671'],
    ['payment_card', 'card 4111 1111 1111 1111 exp 12/29'],
    ['payment_card', 'amex 378282246310005'],
    ['iban', 'pay to DE89 3704 0044 0532 0130 00 please'],
    ['iban', 'GB82WEST12345698765432'],
    ['us_ssn', 'ssn 123-45-6789 on file'],
    ['ip_address', 'client 192.168.10.20 connected'],
    ['ip_address', 'v6 2001:db8:85a3::8a2e:370:7334 seen'],
    ['secret', 'key sk-proj-abcdEFGH1234ijklMNOP5678qrst'],
    ['secret', 'token ghp_0123456789abcdefghijABCDEFGHIJ012345'],
    ['secret', 'aws AKIAIOSFODNN7EXAMPLE here'],
    ['secret', 'slack xoxb-123456789012-abcdefghijkl'],
    ['secret', 'opaque Zx9Qp2Lm7Rt4Vb8Nc1Hs6Jk3Wd5Fg0Ya'],
  ])('%s in %j', (category, text) => {
    expect(categoriesIn(text)).toContain(category);
  });
});

describe('findPii: false positives stay out', () => {
  it.each([
    ['two capitalised words (no name detection)', 'Jane Doe met John Smith in Paris'],
    ['a Luhn-invalid 16-digit number', 'order 4111 1111 1111 1112'],
    ['a bare digit run (an id, not a phone)', 'order id 4155552671'],
    ['an IBAN with a wrong checksum', 'DE88 3704 0044 0532 0130 00'],
    ['an SSN in a never-issued area', '000-12-3456 and 666-12-3456 and 912-34-5678'],
    ['an out-of-range dotted quad', 'version 999.300.1.2'],
    ['a time of day', 'meet at 10:30:00'],
    ['a UUID (hex, low entropy)', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'],
    ['a git commit hash', 'commit 253a976f0c0a3b9e7d1f2a4c6e8b0d2f4a6c8e0b'],
    ['plain prose', 'the quick brown fox jumps over the lazy dog and keeps running for a long time'],
    ['a snake_case identifier', 'approval_required_actions_and_more_settings'],
  ])('%s', (_label, text) => {
    expect(categoriesIn(text)).toEqual([]);
  });
});

describe('findPii: a text seen before (the phone verdicts are remembered)', () => {
  it('finds the same spans the second time, for valid and invalid phone-like texts alike', () => {
    const texts = ['call +44 20 7946 0958 after five', 'call +1 123 456 7890 after five', 'US office: (415) 555-2671', 'ref 555-0100-99', 'order id 4155552671'];
    const first = texts.map((t) => findPii(t, ALL));
    expect(first.map((spans) => spans.map((s) => s.category))).toEqual([['phone'], [], ['phone'], [], []]);
    for (let round = 0; round < 3; round++) expect(texts.map((t) => findPii(t, ALL))).toEqual(first);
  });
});

describe('validators', () => {
  it('Luhn', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(luhnValid('')).toBe(false);
  });
  it('entropy: random tokens sit above hex digests', () => {
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('Zx9Qp2Lm7Rt4Vb8Nc1Hs6Jk3Wd5Fg0Ya')).toBeGreaterThan(4.2);
    expect(shannonEntropy('253a976f0c0a3b9e7d1f2a4c6e8b0d2f4a6c8e0b')).toBeLessThan(4.2);
  });
});

describe('maskText', () => {
  it('never returns the raw value', () => {
    for (const t of ['jane.doe@example.com', '123-45-6789', '192.168.10.20', 'sk-proj-abcdEFGH1234ijklMNOP5678qrst']) {
      const m = maskText(t);
      expect(m).not.toBe(t);
      expect(m).toContain('*');
    }
  });
  it('keeps a card’s last four digits only', () => {
    expect(maskText('4111 1111 1111 1111', 'payment_card')).toBe('************1111');
  });
  it('masks short matches entirely', () => {
    expect(maskText('1.2.3.4')).toBe('1.***.4');
    expect(maskText('a@b.co')).toBe('******');
  });
  it('counts characters as code points, never keeping half of a surrogate pair', () => {
    const m = maskText('\u{1D11E}ab\u{1F600}cdefg\u{1F601}');
    expect(m).toBe('\u{1D11E}a******g\u{1F601}');
    expect(m).not.toMatch(/\p{Cs}/u);
  });
});

describe('scanPii', () => {
  it('walks nested objects and arrays, with dotted paths and array indices, and masks each match', () => {
    const args = { messages: [{ content: 'hi' }, { content: 'ok' }, { content: 'mail jane.doe@example.com or call +1 415 555 2671' }], meta: { ip: '10.0.0.7' }, n: 5 };
    const { matches, truncated } = scanPii(args, ALL);
    expect(truncated).toBe(false);
    expect(matches.map((m) => [m.category, m.field_path])).toEqual([
      ['email', 'messages.2.content'],
      ['phone', 'messages.2.content'],
      ['ip_address', 'meta.ip'],
    ]);
    for (const m of matches) expect(JSON.stringify(args)).not.toContain(m.matched_text);
  });

  it('only reports the wanted categories', () => {
    expect(scanPii({ a: 'jane.doe@example.com 10.0.0.7' }, new Set<PiiCategory>(['ip_address'])).matches.map((m) => m.category)).toEqual(['ip_address']);
  });

  it('does not throw on arguments nested 10,000 deep, and finds what is at the bottom', () => {
    let deep: unknown = { secret: 'jane.doe@example.com' };
    for (let i = 0; i < 10_000; i++) deep = i % 2 ? { x: deep } : [deep];
    const { matches } = scanPii({ root: deep }, ALL);
    expect(matches).toHaveLength(1);
    expect(matches[0].field_path.length).toBeLessThanOrEqual(1024);
    expect(matches[0].field_path.endsWith('.secret')).toBe(true);
  });

  it('stops at its bounds and says so', () => {
    expect(scanPii({ list: Array.from({ length: PII_MAX_VALUES + 10 }, () => 1) }, ALL).truncated).toBe(true);
    const many = scanPii({ list: Array.from({ length: PII_MAX_MATCHES + 5 }, (_, i) => `user${i}@example.com`) }, ALL);
    expect(many.truncated).toBe(true);
    expect(many.matches).toHaveLength(PII_MAX_MATCHES);
  });
});

describe('redactPii', () => {
  it('replaces each match by its category and keeps the rest', () => {
    expect(redactPii('mail jane.doe@example.com, card 4111 1111 1111 1111.', ALL)).toBe('mail [REDACTED:email], card [REDACTED:payment_card].');
    expect(redactPii('nothing here', ALL)).toBe('nothing here');
  });
});
