/**
 * Interventions (`/interventions`): `GET /api/v1/interventions` with every filter the API has (type, outcome,
 * action_name, agent_id, run_id, policy_id, risk_level, start_date, end_date), all in the URL, paged server-side
 * (skip / limit). Each row links to its detail view. Source: spec §Interventions, List query parameters.
 */
import { PageHeader } from '../../app/Layout.js';
import { INTERVENTION_OUTCOMES, INTERVENTION_TYPES, RISK_LEVELS, type InterventionRecord } from '../../api/types.js';
import type { FilterField } from '../../components/FilterBar.js';
import { FilteredList } from '../../components/FilteredList.js';
import { usd, when } from '../../components/format.js';
import { Tag } from '../../components/Tag.js';
import { LongText } from '../../components/LongText.js';

const FIELDS: FilterField[] = [
  { name: 'type', label: 'Type', kind: 'select', options: INTERVENTION_TYPES },
  { name: 'outcome', label: 'Outcome', kind: 'select', options: INTERVENTION_OUTCOMES },
  { name: 'risk_level', label: 'Risk level', kind: 'select', options: RISK_LEVELS },
  { name: 'action_name', label: 'Action', kind: 'text', placeholder: 'exact name' },
  { name: 'agent_id', label: 'Agent', kind: 'text' },
  { name: 'run_id', label: 'Run', kind: 'text' },
  { name: 'policy_id', label: 'Policy id', kind: 'text' },
  { name: 'start_date', label: 'From', kind: 'date' },
  { name: 'end_date', label: 'To', kind: 'date' },
];

/** The interventions list. */
export function InterventionsPage() {
  return (
    <>
      <PageHeader title="Interventions">What the guardrails did to the actions agents attempted, newest first.</PageHeader>
      <FilteredList<InterventionRecord>
        path="/api/v1/interventions"
        rowsKey="interventions"
        fields={FIELDS}
        what="interventions"
        empty="No interventions match these filters."
        rowKey={(r) => r.id}
        rowHref={(r) => `/interventions/${encodeURIComponent(r.id)}`}
        columns={[
          { key: 'action', header: 'Action', cell: (r) => r.action_name },
          { key: 'type', header: 'Type', cell: (r) => <Tag value={r.type} /> },
          { key: 'outcome', header: 'Outcome', cell: (r) => <Tag value={r.outcome} /> },
          { key: 'risk', header: 'Risk', cell: (r) => <Tag value={r.risk_level} /> },
          { key: 'agent', header: 'Agent', cell: (r) => r.agent_id },
          { key: 'policy', header: 'Policy', cell: (r) => r.policy_name ?? r.policy_id ?? '—' },
          { key: 'prevented', header: 'Cost prevented', cell: (r) => usd(r.cost_prevented_usd), numeric: true },
          { key: 'reason', header: 'Reason', cell: (r) => <LongText text={r.reason} foldAt={160} /> },
          { key: 'time', header: 'Time', cell: (r) => <time dateTime={r.timestamp}>{when(r.timestamp)}</time> },
        ]}
      />
    </>
  );
}
