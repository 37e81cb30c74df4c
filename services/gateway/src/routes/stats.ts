/**
 * The streamed ledger export of the stats service (its other routes, `/api/v1/stats/*`, `/api/v1/runs` and
 * `/api/v1/agents/{id}/stats`, are forwarded as the route table says: ../forward.ts).
 * Source: spec §Stats, export_ledger.
 */
import type { Response } from 'express';
import { LEDGER_CSV_COLUMNS, type WireReply } from '@agp/contracts';
import { callUnchecked } from '@agp/bus';
import type { RouteCall } from '../router.js';

const CONTENT_TYPES = { json: 'application/json', jsonl: 'application/x-ndjson', csv: 'text/csv; charset=utf-8' } as const;

/** Write `text` and wait for the socket to drain when its buffer is full (backpressure keeps memory flat). */
export function write(res: Response, text: string): Promise<void> {
  // A client that went away: stop (its 'close' has already fired, so waiting for it would hang the export).
  if (res.destroyed) return Promise.reject(new Error('client closed the export'));
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      res.off('drain', ok);
      res.off('close', closed);
      if (err) reject(err);
      else resolve();
    };
    const ok = () => done();
    const closed = () => done(new Error('client closed the export'));
    res.once('drain', ok);
    res.once('close', closed);
  });
}

/**
 * `GET /api/v1/ledger/export?format=json|jsonl|csv&start_date=&end_date=&agent_id=`: the ledger streamed as an
 * attachment, oldest first. The first page is asked for before anything is written, so a bad query is a 422 problem
 * (never a truncated 200); then each keyset page is written as it arrives while the next is already requested, with
 * backpressure, so memory stays flat at any row count. A failure after the first byte aborts the response.
 */
export async function exportLedger({ req, res, ctx, deps }: RouteCall): Promise<void> {
  const page = (cursor: WireReply<'ledger.export-page'>['next_cursor']) => callUnchecked(deps.bus, 'ledger.export-page', ctx, { query: req.query, cursor }, 30_000);
  let current = await page(null);
  const format = current.format;
  const stamp = new Date().toISOString().slice(0, 10);
  res.status(200).set({ 'content-type': CONTENT_TYPES[format], 'content-disposition': `attachment; filename="ledger-${stamp}.${format}"`, 'cache-control': 'no-store' });
  try {
    await write(res, format === 'json' ? '[' : format === 'csv' ? `${LEDGER_CSV_COLUMNS.join(',')}\r\n` : '');
    let first = true;
    for (;;) {
      const next = current.next_cursor ? page(current.next_cursor) : null;
      next?.catch(() => {}); // observed below; avoid an unhandled rejection while this page is written
      if (current.text) {
        await write(res, format === 'json' && !first ? `,${current.text}` : current.text);
        first = false;
      }
      if (!next) break;
      current = await next;
    }
    if (format === 'json') await write(res, ']');
    res.end();
  } catch {
    // Headers and part of the body are out: the only honest signal left is an aborted response.
    res.destroy();
  }
}
