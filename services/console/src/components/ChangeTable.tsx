/**
 * Field changes as a table: each field with its value before and after (an audit-trail entry, a policy version).
 * Values that are not strings print as JSON; long ones fold ({@link LongText}).
 */
import { label } from './format.js';
import { LongText } from './LongText.js';

/** A value as text: strings as they are, anything else as JSON; null and undefined as null ('—'). */
export function valueText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}

/** Props of {@link ChangeTable}. */
export interface ChangeTableProps {
  /** What changed, for screen readers (visually hidden caption). */
  caption: string;
  /** Field → its value before and after. */
  changes: Record<string, { from: unknown; to: unknown }>;
  /** Column headers of the two values. @default ['From', 'To'] */
  headers?: [string, string];
}

/** The changed fields, before in red, after in green. */
export function ChangeTable({ caption, changes, headers = ['From', 'To'] }: ChangeTableProps) {
  return (
    <table className="change-table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">{headers[0]}</th>
          <th scope="col">{headers[1]}</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(changes).map(([field, c]) => (
          <tr key={field}>
            <th scope="row">{label(field)}</th>
            <td className="diff-from">
              <LongText text={valueText(c.from)} foldAt={300} />
            </td>
            <td className="diff-to">
              <LongText text={valueText(c.to)} foldAt={300} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
