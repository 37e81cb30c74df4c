import { describe, expect, it } from 'vitest';
import { Wire } from '@agp/contracts';
import { ingestFilter, ingestSubject, ingestSubjects, prefixedSubject, subjectFilterToRegex, subjectToken } from './subjects.js';

describe('subjectToken', () => {
  it('keeps ids made of [A-Za-z0-9_-] as they are', () => {
    expect(subjectToken('acme_Corp-42')).toBe('acme_Corp-42');
  });

  it('escapes dots, wildcards, spaces and ~ so the result is one NATS token', () => {
    expect(subjectToken('a.b')).toBe('a~2eb');
    expect(subjectToken('*>')).toBe('~2a~3e');
    expect(subjectToken('a b~')).toBe('a~20b~7e');
    expect(subjectToken('é')).toBe('~c3~a9');
    expect(subjectToken('')).toBe('~');
  });

  it('never maps two different ids to the same token', () => {
    const ids = ['a.b', 'a~2eb', 'a_b', 'a-b', 'a b', 'a~20b', '~', ''];
    expect(new Set(ids.map(subjectToken)).size).toBe(ids.length);
  });
});

describe('ingestSubject', () => {
  it('builds <prefix>.ingested.<org token>.<kind>', () => {
    expect(ingestSubject('agp', 'acme.eu', 'interventions')).toBe('agp.ingested.acme~2eeu.interventions');
  });

  it('rejects a kind that is not one token', () => {
    expect(() => ingestSubject('agp', 'acme', 'a.b')).toThrow(/invalid ingest kind/);
  });
});

describe('subjectFilterToRegex', () => {
  const matches = (filter: string, subject: string) => new RegExp(subjectFilterToRegex(filter)).test(subject);

  it('matches * as exactly one token', () => {
    expect(matches('agp.ingest.*.interventions', 'agp.ingest.acme.interventions')).toBe(true);
    expect(matches('agp.ingest.*.interventions', 'agp.ingest.a.b.interventions')).toBe(false);
    expect(matches('agp.ingest.*.interventions', 'agp.ingest.acme.runs')).toBe(false);
  });

  it('matches > as one or more trailing tokens', () => {
    expect(matches('agp.ingest.>', 'agp.ingest.acme.runs')).toBe(true);
    expect(matches('agp.ingest.>', 'agp.ingest')).toBe(false);
  });

  it('treats other characters literally', () => {
    expect(matches('agp.ingest.a~2eb.x', 'agp.ingest.a~2eb.x')).toBe(true);
    expect(matches('agp.in$est.x', 'agp.in$est.x')).toBe(true);
    expect(matches('agp.ingest.x', 'agpXingestXx')).toBe(false);
  });

  it('rejects > before the last token', () => {
    expect(() => subjectFilterToRegex('agp.>.x')).toThrow(/must be last/);
  });
});

describe('ingest stream subjects', () => {
  it('never capture a request/reply subject (JetStream would answer the request with a pub ack)', () => {
    const stream = new RegExp(subjectFilterToRegex(ingestSubjects('agp')));
    for (const pattern of Object.keys(Wire)) expect(stream.test(prefixedSubject('agp', pattern)), pattern).toBe(false);
    expect(stream.test(ingestSubject('agp', 'acme', 'interventions'))).toBe(true);
    expect(new RegExp(subjectFilterToRegex(ingestFilter('agp', 'interventions'))).test(ingestSubject('agp', 'acme', 'interventions'))).toBe(true);
  });
});
