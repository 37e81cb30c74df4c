import { describe, expect, it } from 'vitest';
import { policyVersionAt } from './policyVersion.js';

const history = [
  { version: 1, at: '2026-01-01T00:00:00.000Z' },
  { version: 3, at: '2026-01-03T00:00:00.000Z' },
  { version: 2, at: '2026-01-02T00:00:00.000Z' },
];

describe('policyVersionAt', () => {
  it('picks the highest version at or before the instant', () => {
    expect(policyVersionAt(history, '2026-01-02T12:00:00Z')).toBe(2);
    expect(policyVersionAt(history, '2026-01-03T00:00:00.000Z')).toBe(3);
    expect(policyVersionAt(history, '2027-01-01T00:00:00Z')).toBe(3);
  });
  it('answers null when the policy did not exist yet', () => {
    expect(policyVersionAt(history, '2025-12-31T23:59:59.999Z')).toBeNull();
    expect(policyVersionAt([], '2026-01-01T00:00:00Z')).toBeNull();
  });
});
