/**
 * A policy in words on its page: {@link PolicySummary}, every field as text (lists one item a line), and
 * {@link PolicyDiffTable}, two versions of its fields side by side with the lines each side lacks marked, which the
 * version comparison and each history entry use. The words come from `policy-text.ts`. Source: docs/console.md
 * (Policies).
 */
import { Fragment } from 'react';
import type { Policy, PolicyField } from '@agp/contracts';
import { ABSENT, diffLines, FIELD_LABELS, NONE, fieldLines, POLICY_FIELDS, type DiffLine } from './policy-text.js';

/** Fields whose lines are names (actions, agents), printed on one line, comma-separated. */
const NAME_LISTS = new Set<PolicyField>(['denied_actions', 'allowed_actions', 'approval_required_actions', 'agent_ids']);

/** Fields whose lines are rules (one sentence each), listed even when there is one. */
const RULE_LISTS = new Set<PolicyField>(['period_budgets', 'rate_limits', 'downgrades', 'guardrails']);

/** A field's lines: a list named after the field for names and rules (unless there are none), else text. */
function Lines({ field, lines, testId }: { field: PolicyField; lines: DiffLine[]; testId?: string }) {
  const single = lines.length === 1 && (!RULE_LISTS.has(field) || lines[0].text === NONE || lines[0].text === ABSENT);
  if (single && !NAME_LISTS.has(field)) {
    const [l] = lines;
    return l.changed ? <mark data-testid={testId}>{l.text}</mark> : <span data-testid={testId}>{l.text}</span>;
  }
  return (
    <ul className={NAME_LISTS.has(field) ? 'value-lines names' : 'value-lines'} aria-label={FIELD_LABELS[field]} data-testid={testId}>
      {lines.map((l, i) => (
        <li key={i}>{l.changed ? <mark>{l.text}</mark> : l.text}</li>
      ))}
    </ul>
  );
}

const plain = (field: PolicyField, v: unknown): DiffLine[] => fieldLines(field, v).map((text) => ({ text, changed: false }));

/** Every field of a policy as a description list (the name is the page's title, so it is left out). */
export function PolicySummary({ p }: { p: Policy }) {
  return (
    <dl className="policy-rules">
      {POLICY_FIELDS.filter((f) => f !== 'name').map((f) => (
        <Fragment key={f}>
          <dt>{FIELD_LABELS[f]}</dt>
          <dd>
            <Lines field={f} lines={plain(f, p[f])} testId={`policy-${f.replace(/_/g, '-')}`} />
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

/** Props of {@link PolicyDiffTable}. */
export interface PolicyDiffTableProps {
  /** What is compared, for screen readers (visually hidden caption). */
  caption: string;
  /** The column headers of the two versions; one header for a creation, which has no before (one column, nothing marked). */
  headers: [string, string] | [string];
  /** The fields to show, each with its two values. */
  rows: Array<{ field: PolicyField; from: unknown; to: unknown }>;
}

/**
 * Fields of two versions of a policy side by side, in words. A changed field's row is marked `data-changed="yes"`
 * (and "(changed)" for screen readers); within it, the lines one side lacks are highlighted (`<mark>`).
 */
export function PolicyDiffTable({ caption, headers, rows }: PolicyDiffTableProps) {
  const created = headers.length === 1;
  return (
    <div className="table-scroll">
      <table className="change-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            {headers.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(({ field, from, to }) => {
            const d = created ? { from: [], to: plain(field, to), changed: false } : diffLines(field, from, to);
            const tone = (side: string) => (d.changed ? side : undefined);
            return (
              <tr key={field} data-changed={d.changed ? 'yes' : 'no'} data-field={field}>
                <th scope="row">
                  {FIELD_LABELS[field]}
                  {d.changed ? <span className="visually-hidden"> (changed)</span> : null}
                </th>
                {created ? null : (
                  <td className={tone('diff-from')}>
                    <Lines field={field} lines={d.from} />
                  </td>
                )}
                <td className={tone('diff-to')}>
                  <Lines field={field} lines={d.to} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
