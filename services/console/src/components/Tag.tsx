/** A small coloured label for an enum value (type, outcome, risk level, status); its first word picks the colour. */
import { label } from './format.js';

/** The label of `value` ('—' when absent), styled by its first word (`tag-blocked`, `tag-pending`, …). */
export function Tag({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="muted">—</span>;
  return <span className={`tag tag-${value.split('_')[0]}`}>{label(value)}</span>;
}
