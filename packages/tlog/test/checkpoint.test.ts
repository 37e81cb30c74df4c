import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CheckpointError, leafHash, openCheckpoint, parseVerifierKey, rootOf, signCheckpoint, verifierKey } from '../src/index.js';

/** Signed checkpoints (C2SP signed-note / tlog-checkpoint, Ed25519): written, opened, and refused when altered. */
const key = () => generateKeyPairSync('ed25519').privateKey;

describe('signed checkpoints', () => {
  const log = key();
  const witness = key();
  const root = rootOf([leafHash(Buffer.from('a')), leafHash(Buffer.from('b'))]);
  const checkpoint = { origin: 'agp.test/audit/acme', size: 2, root, extensions: ['time 2026-11-29T10:00:00Z'] };
  const note = signCheckpoint(checkpoint, [{ name: 'agp.test-audit-1', privateKey: log }, { name: 'witness', privateKey: witness }]);
  const vkey = verifierKey('agp.test-audit-1', log);

  it('writes the checkpoint body, a blank line and one "— name signature" line per signer', () => {
    const lines = note.split('\n');
    expect(lines.slice(0, 5)).toEqual(['agp.test/audit/acme', '2', Buffer.from(root).toString('base64'), 'time 2026-11-29T10:00:00Z', '']);
    expect(lines[5]).toMatch(/^— agp\.test-audit-1 [A-Za-z0-9+/=]+$/);
    expect(lines[6]).toMatch(/^— witness /);
    expect(vkey).toMatch(/^agp\.test-audit-1\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/);
  });

  it('opens with a known key, ignoring signatures by unknown ones', () => {
    const opened = openCheckpoint(note, [vkey]);
    expect(opened).toMatchObject({ origin: 'agp.test/audit/acme', size: 2, extensions: ['time 2026-11-29T10:00:00Z'], verifiedBy: ['agp.test-audit-1'] });
    expect(Buffer.from(opened.root).equals(Buffer.from(root))).toBe(true);
    expect(openCheckpoint(note, [vkey, verifierKey('witness', witness)]).verifiedBy).toEqual(['agp.test-audit-1', 'witness']);
  });

  it('opens a checkpoint published by Go’s checksum database (sum.golang.org) with its published verifier key', () => {
    // Interoperability: the key id (SHA-256(name || "\n" || 0x01 || key)[:4]) and the signed text are the ecosystem's.
    const goKey = 'sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8';
    const goNote = Buffer.from(
      'Z28uc3VtIGRhdGFiYXNlIHRyZWUKNjU2NjQyNTgKV1ZWTlZEMnF4K2ZUcTMxemtqNlVBcXhUNVg2SHZHcGhHTStvOFRobmJzZz0KCuKAlCBzdW0uZ29sYW5nLm9yZyBBejNncmxpZ0ptZ1g3S0d5R1BLeWJ5a05UaDNWZ3NiTHZVdXZPd3JNNXpMVmx1bG1GcDJ3ZHZieE93NzQvZ2NOeFVSU2hYRXBiN1JYY3MzK0JZZmxZTit3MGdRPQo=',
      'base64',
    ).toString('utf8');
    expect(openCheckpoint(goNote, [goKey])).toMatchObject({ origin: 'go.sum database tree', size: 65664258, verifiedBy: ['sum.golang.org'] });
    expect(() => openCheckpoint(goNote.replace('65664258', '65664259'), [goKey])).toThrow(/does not verify/);
    expect(parseVerifierKey(goKey).name).toBe('sum.golang.org');
    expect(() => parseVerifierKey(goKey.replace('033de0ae', '033de0af'))).toThrow(/id does not match/);
  });

  it('refuses an altered size or root, a key it does not know, a forged key of the same name, and malformed notes', () => {
    const altered = note.replace('\n2\n', '\n3\n');
    expect(() => openCheckpoint(altered, [vkey])).toThrow(/does not verify/);
    const otherRoot = Buffer.from(rootOf([leafHash(Buffer.from('x'))])).toString('base64');
    expect(() => openCheckpoint(note.replace(Buffer.from(root).toString('base64'), otherRoot), [vkey])).toThrow(/does not verify/);
    expect(() => openCheckpoint(note, [verifierKey('someone-else', key())])).toThrow(/signed by no known key \(signed by: agp\.test-audit-1, witness\)/);
    // A different key under the same name has a different key id: it is not taken for the real one.
    expect(() => openCheckpoint(signCheckpoint(checkpoint, [{ name: 'agp.test-audit-1', privateKey: key() }]), [vkey])).toThrow(/no known key/);
    for (const bad of ['', 'agp.test/audit/acme\n2\n', 'o\nx\nAAAA\n\n— k AAAAAAA=\n', note.slice(0, -1), note.replace('— agp', '- agp')]) {
      expect(() => openCheckpoint(bad, [vkey]), JSON.stringify(bad.slice(0, 40))).toThrow(CheckpointError);
    }
    expect(() => verifierKey('has space', log)).toThrow(CheckpointError);
  });
});
