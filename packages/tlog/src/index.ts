/**
 * `@agp/tlog`: the transparency log's primitives, with no I/O: the RFC 9162 Merkle tree (tree heads, inclusion and
 * consistency proofs and their verification) and signed checkpoints (C2SP signed-note / tlog-checkpoint, Ed25519).
 * Source: RFC 9162 §2.1; C2SP signed-note and tlog-checkpoint.
 */
export * from './merkle.js';
export * from './checkpoint.js';
export * from './stored.js';
export * from './range.js';
export * from './pack.js';
