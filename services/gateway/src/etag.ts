/**
 * Conditional GETs of the routes the gateway answers itself (the governance snapshot, a replay bundle, the tool
 * gateway's lists): a strong ETag and the If-None-Match check that answers 304. Source: RFC 9110 §8.8.3, §13.1.2.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '@agp/contracts';

/** Strong ETag of a value: the SHA-256 of its canonical JSON (base64url, quoted). */
export function strongEtag(value: unknown): string {
  return `"${createHash('sha256').update(canonicalJson(value)).digest('base64url')}"`;
}

/** Whether an If-None-Match header matches `etag` (weak comparison, as RFC 9110 §13.1.2 asks; `*` matches any). */
export function noneMatch(header: string | undefined, etag: string): boolean {
  return !!header && header.split(',').some((t) => t.trim() === '*' || t.trim().replace(/^W\//, '') === etag);
}
