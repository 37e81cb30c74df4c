/** CSV cells for the platform's exports (the ledger, the audit log). Source: docs/decisions.md (Ledger CSV export: formula cells). */

/** First characters that make a spreadsheet read a cell as a formula (OWASP CSV injection): = + - @ tab CR. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * RFC 4180 field: quoted (quotes doubled) when it holds a comma, quote, CR or LF. Null is an empty field. A number is
 * written as it is (a negative cost stays a number). A text cell that begins with `=`, `+`, `-`, `@`, a tab or a
 * carriage return is neutralised as OWASP recommends against CSV injection: prefixed with a single quote `'` and
 * quoted, so a spreadsheet shows it as text and never evaluates it (`=HYPERLINK("x")` → `"'=HYPERLINK(""x"")"`).
 * Source: docs/decisions.md (Ledger CSV export: formula cells).
 */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  if (FORMULA_START.test(v)) return `"'${v.replace(/"/g, '""')}"`;
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}
