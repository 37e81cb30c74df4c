/**
 * A row of filters bound to URL search parameters ({@link useUrlFilters}): selects for enums, text and number inputs
 * (applied on Enter or when the field loses focus) and date inputs. Each change updates the URL, which the page's
 * query reads, so the filtered view can be shared by its address.
 */
import { useEffect, useState } from 'react';
import { label } from './format.js';

/** One filter: the query parameter it sets and how it is edited. */
export interface FilterField {
  /** The query parameter (also the URL search parameter). */
  name: string;
  label: string;
  kind: 'select' | 'text' | 'date' | 'number';
  /** The values of a `select` (an "any" choice, the empty value, comes first). */
  options?: readonly string[];
  placeholder?: string;
}

/** Props of {@link FilterBar}. */
export interface FilterBarProps {
  fields: FilterField[];
  /** Current values by name ('' = unset). */
  values: Record<string, string>;
  /** Set one filter ('' clears it). */
  onChange: (name: string, value: string) => void;
  /** Clear every filter. */
  onClear: () => void;
}

function TextFilter({ field, value, onChange }: { field: FilterField; value: string; onChange: (v: string) => void }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  const id = `filter-${field.name}`;
  const number = field.kind === 'number';
  return (
    <div className="filter">
      <label htmlFor={id}>{field.label}</label>
      <input
        id={id}
        name={field.name}
        type={number ? 'number' : 'text'}
        inputMode={number ? 'decimal' : undefined}
        min={number ? 0 : undefined}
        step={number ? 'any' : undefined}
        value={draft}
        placeholder={field.placeholder}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={() => draft.trim() !== value && onChange(draft.trim())}
        onKeyDown={(e) => {
          if (e.key === 'Enter') onChange(draft.trim());
        }}
      />
    </div>
  );
}

/** The filters of a list page. */
export function FilterBar({ fields, values, onChange, onClear }: FilterBarProps) {
  const any = fields.some((f) => values[f.name]);
  return (
    <form className="filter-bar" role="search" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
      {fields.map((f) => {
        const id = `filter-${f.name}`;
        if (f.kind === 'select')
          return (
            <div className="filter" key={f.name}>
              <label htmlFor={id}>{f.label}</label>
              <select id={id} name={f.name} value={values[f.name] ?? ''} onChange={(e) => onChange(f.name, e.target.value)}>
                <option value="">any</option>
                {(f.options ?? []).map((o) => (
                  <option key={o} value={o}>
                    {label(o)}
                  </option>
                ))}
              </select>
            </div>
          );
        if (f.kind === 'date')
          return (
            <div className="filter" key={f.name}>
              <label htmlFor={id}>{f.label}</label>
              <input id={id} name={f.name} type="date" value={values[f.name] ?? ''} onChange={(e) => onChange(f.name, e.target.value)} />
            </div>
          );
        return <TextFilter key={f.name} field={f} value={values[f.name] ?? ''} onChange={(v) => onChange(f.name, v)} />;
      })}
      <div className="filter filter-actions">
        <button type="button" onClick={onClear} disabled={!any}>
          Clear filters
        </button>
      </div>
    </form>
  );
}
