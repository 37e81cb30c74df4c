import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '@agp/eventstore';
import { ed25519FromSeed } from './keys.js';
import { commitmentOf, committedLeafOf, leafFromStore, leafOf, leafRecord, pointerGet } from './leaves.js';
import { inclusionProof, openCheckpoint, rootOf, signCheckpoint, verifierKey } from '@agp/tlog';

/**
 * The leaf serialisation and the worked example of docs/audit.md: the same events give byte for byte the leaves,
 * hashes, root, proof, verifier key and signed note the document prints, so a third party's implementation can be
 * checked against it.
 */
const event = (n: number, type: string, stream: string, version: number, actor: string, actorName: string | undefined, at: string, data: Record<string, unknown>): StoredEvent => ({
  event_id: `0192f0a0-0000-7000-8000-00000000000${n}`,
  type,
  stream_id: stream,
  stream_version: version,
  global_position: BigInt(n),
  recorded_at: at,
  data,
  metadata: { organization_id: 'acme', actor, ...(actorName ? { actor_name: actorName } : {}), correlation_id: `c${n}`, schema_version: 1 },
});

const EVENTS = [
  event(1, 'PolicyCreated', 'policy-pol-1', 1, 'key:k1', 'ci key', '2026-11-29T10:00:00.000Z', { id: 'pol-1', name: 'Refund limit', at: '2026-11-29T10:00:00.000Z', run_budget: 5 }),
  event(2, 'KillSwitchEngaged', 'killswitch-x', 1, 'user:u1', 'alice@acme.test', '2026-11-29T10:01:00.000Z', { scope: 'agent', agent_id: 'billing-bot', reason: 'looping', at: '2026-11-29T10:01:00.000Z' }),
  event(3, 'InterventionOutcomeChanged', 'intervention-i1', 2, 'approver:jane@acme.test', undefined, '2026-11-29T10:02:00.000Z', { id: 'i1', from: 'escalated', to: 'approved_after_review', approver_email: 'jane@acme.test' }),
];

describe('audit trail leaves', () => {
  it('serialises a record as RFC 8785 JSON with its version, and hashes it as an RFC 9162 leaf (docs/audit.md, worked example)', () => {
    const leaves = EVENTS.map(leafOf);
    expect(leaves[0].text).toBe(
      '{"actor":"key:k1","actor_name":"ci key","at":"2026-11-29T10:00:00.000Z","data":{"at":"2026-11-29T10:00:00.000Z","id":"pol-1","name":"Refund limit","run_budget":5},"id":"0192f0a0-0000-7000-8000-000000000001","organization_id":"acme","stream":"policy-pol-1","stream_version":1,"type":"PolicyCreated","v":1}',
    );
    const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
    expect(leaves.map((l) => b64(l.hash))).toEqual(['QinMeQONUEZNpIWHzwVRObSX0SdBFq95lKPL+lMTqsU=', '24lqA3mr+d+aY1Phxgd5kNTh5KA8XEOsM392acwum0w=', 'mn0L/0D58e/VCwD4IycvbrUdRc1nyrr0Q/i2eHgHZSo=']);
    const root = rootOf(leaves.map((l) => l.hash));
    expect(b64(root)).toBe('3cZqPKpaaJDY0vyE+xS4GhpVBUYVu4CnEIDSjbtHanI=');
    expect(inclusionProof(leaves.map((l) => l.hash), 0).map(b64)).toEqual(['24lqA3mr+d+aY1Phxgd5kNTh5KA8XEOsM392acwum0w=', 'mn0L/0D58e/VCwD4IycvbrUdRc1nyrr0Q/i2eHgHZSo=']);
    const key = ed25519FromSeed(Buffer.alloc(32, 7));
    const vkey = verifierKey('agp-audit', key);
    expect(vkey).toBe('agp-audit+44f5f5c1+AepKbGPinFIKvvVQexMuxfmVR3auvr57kkIe6mkURtIs');
    const note = signCheckpoint({ origin: 'agp-audit/acme', size: 3, root, extensions: ['time 2026-11-29T10:05:00Z'] }, [{ name: 'agp-audit', privateKey: key }]);
    expect(note).toBe('agp-audit/acme\n3\n3cZqPKpaaJDY0vyE+xS4GhpVBUYVu4CnEIDSjbtHanI=\ntime 2026-11-29T10:05:00Z\n\n— agp-audit RPX1wToRxq9XnWKKRC1q7tpR/6twP828aYYrKki/px/FuyUPhY6nIdGKdyr6cP5PtL2RSvyPt+/rDu0TJuxqkC0o/gY=\n');
    expect(openCheckpoint(note, [vkey]).verifiedBy).toEqual(['agp-audit']);
  });

  it('keeps no sealed or hashed secret in a leaf, and keeps an API key event’s key as listed', () => {
    const server = leafRecord(event(4, 'McpServerRegistered', 'mcp-server-x', 1, 'key:k1', undefined, '2026-11-29T10:03:00.000Z', { name: 'github', header_names: ['Authorization'], sealed_headers: 'agp1.k.iv.body' }));
    expect(server.data).toEqual({ name: 'github', header_names: ['Authorization'] });
    const key = leafRecord(event(5, 'ApiKeyCreated', 'api-key-k2', 1, 'key:k1', undefined, '2026-11-29T10:04:00.000Z', { key: { id: 'k2', name: 'ci', scope: 'read' } }));
    expect(key.data).toEqual({ key: { id: 'k2', name: 'ci', scope: 'read' } });
    expect(() => ed25519FromSeed(Buffer.alloc(31))).toThrow(/32 bytes/);
  });

  it('logs a record with personal data as a version 2 leaf of salted commitments; the store, its salts and the logged leaf rebuild it (docs/audit.md, Salted commitments)', () => {
    const e = EVENTS[1];
    const salt = new Uint8Array(32).fill(9);
    const logged = committedLeafOf(e, new Map([['/data/reason', salt]]));
    // The worked example of docs/audit.md: the reason "looping" under the salt 0x09 × 32.
    expect(logged.text).toBe(
      '{"actor":"user:u1","actor_name":"alice@acme.test","at":"2026-11-29T10:01:00.000Z","data":{"agent_id":"billing-bot","at":"2026-11-29T10:01:00.000Z","reason":{"$commitment":"' +
        commitmentOf(salt, 'looping') +
        '"},"scope":"agent"},"id":"0192f0a0-0000-7000-8000-000000000002","organization_id":"acme","stream":"killswitch-x","stream_version":1,"type":"KillSwitchEngaged","v":2}',
    );
    expect(commitmentOf(salt, 'looping')).toBe('4n+849x4VbLSBn6hxj5r/0ax+52k1faiu/VVQ7AtkKQ=');
    expect(Buffer.from(logged.hash).toString('base64')).toBe('s+SVk3Hkqofi3F1lJ2o3MV4B0aAmzP0Ki+7q82h3XsA=');
    expect(commitmentOf(salt, 'looping')).toBe(createHash('sha256').update(Buffer.concat([Buffer.from(salt), Buffer.from('"looping"')])).digest('base64'));
    expect(logged.text).not.toContain('looping');
    // A fresh salt per field, 32 random bytes; a record without committed fields stays version 1.
    const fresh = committedLeafOf(e);
    expect(fresh.salts.get('/data/reason')).toHaveLength(32);
    expect(fresh.text).not.toBe(logged.text);
    expect(committedLeafOf(EVENTS[0]).text).toBe(leafOf(EVENTS[0]).text);

    // Rebuilt from the store: the same leaf, the reason disclosed with its salt; the disclosure recomputes the commitment.
    const rebuilt = leafFromStore(e, logged.salts, logged.text);
    expect(rebuilt.text).toBe(logged.text);
    expect(rebuilt.disclosures).toEqual({ '/data/reason': { salt: Buffer.from(salt).toString('base64'), value: 'looping' } });
    expect(pointerGet(JSON.parse(rebuilt.text), '/data/reason')).toEqual({ $commitment: commitmentOf(Buffer.from(rebuilt.disclosures['/data/reason'].salt, 'base64'), 'looping') });
    // The value edited in the store: the leaf's hash no longer matches the logged one.
    const edited = leafFromStore({ ...e, data: { ...e.data, reason: 'nothing to see' } }, logged.salts, logged.text);
    expect(Buffer.from(edited.hash).equals(Buffer.from(logged.hash))).toBe(false);
    // Erased: the value and the salt are gone; the logged commitment stands in, the field is redacted, the hash unchanged.
    const { reason: _gone, ...erasedData } = e.data as Record<string, unknown>;
    const erased = leafFromStore({ ...e, data: erasedData }, new Map(), logged.text);
    expect(erased).toMatchObject({ text: logged.text, disclosures: {}, redacted: ['/data/reason'] });
    // A version 1 leaf logged before commitments is rebuilt as version 1.
    expect(leafFromStore(e, new Map(), leafOf(e).text)).toMatchObject({ text: leafOf(e).text, redacted: [] });
  });
});
