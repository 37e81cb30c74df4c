/**
 * A tool's `input_schema` (JSON Schema, as the tool gateway lists it) rendered as a form, and the form's values turned
 * back into the call's `arguments`.
 *
 * Each top-level property becomes one field, by its (non-null) type:
 * - `string` with `enum` → a select; `string` → a text input;
 * - `number` / `integer` → a number input (step 1 for integers);
 * - `boolean` → a select of "not set" / true / false (a checkbox could not leave it unset);
 * - `array` of strings → checkboxes when the items are an enum, else a textarea with one value per line;
 * - anything else (objects, unions) → a textarea holding JSON.
 * Required properties are marked (and `aria-required`), but never checked here: the API validates, so the
 * `invalid_arguments` error envelope is what the user sees. Empty fields are left out of the arguments.
 */
import { useId } from 'react';

/** A JSON Schema node, as far as the form reads it. */
export interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  description?: string;
  default?: unknown;
  properties?: Record<string, SchemaNode>;
  required?: string[];
}

/** The kinds of field the form draws. */
export type FieldKind = 'string' | 'enum' | 'number' | 'integer' | 'boolean' | 'enum-list' | 'string-list' | 'json';

/** One field of the form: the property, its kind, whether required, its enum values and description. */
export interface FormField {
  name: string;
  kind: FieldKind;
  required: boolean;
  options: string[];
  description: string;
}

/** The form's values by property name: text for most fields, the ticked values for an enum list. */
export type FormValues = Record<string, string | string[]>;

/** A node with `null` alternatives removed (`type: ['string', 'null']`, `anyOf: [{…}, {type: 'null'}]`). */
function nonNull(node: SchemaNode): SchemaNode {
  const alts = node.anyOf ?? node.oneOf;
  if (alts) {
    const rest = alts.filter((a) => a.type !== 'null');
    if (rest.length === 1) return { ...rest[0]!, description: node.description ?? rest[0]!.description };
    return node;
  }
  if (Array.isArray(node.type)) {
    const rest = node.type.filter((t) => t !== 'null');
    return rest.length === 1 ? { ...node, type: rest[0] } : node;
  }
  return node;
}

/** The kind of field a property is drawn as. */
export function fieldKind(raw: SchemaNode): FieldKind {
  const node = nonNull(raw);
  switch (node.type) {
    case 'string':
      return node.enum ? 'enum' : 'string';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    case 'array': {
      const items = node.items ? nonNull(node.items) : undefined;
      if (items?.type === 'string') return items.enum ? 'enum-list' : 'string-list';
      return 'json';
    }
    default:
      return 'json';
  }
}

/** The fields of an object schema, in its property order. */
export function formFields(schema: SchemaNode): FormField[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, raw]) => {
    const node = nonNull(raw);
    const kind = fieldKind(raw);
    const options = (kind === 'enum-list' ? nonNull(node.items!).enum : node.enum) ?? [];
    return { name, kind, required: required.has(name), options: options.map(String), description: node.description ?? raw.description ?? '' };
  });
}

/**
 * The call's arguments from the form's values: empty fields left out, numbers parsed, lists split by line, JSON parsed.
 * @returns the arguments, or the first field whose value cannot be read (with why).
 */
export function formArguments(fields: FormField[], values: FormValues): { arguments: Record<string, unknown> } | { error: string } {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (v === undefined) continue;
    if (Array.isArray(v)) {
      if (v.length) out[f.name] = v;
      continue;
    }
    const text = f.kind === 'json' ? v.trim() : v;
    if (text.trim() === '') continue;
    if (f.kind === 'number' || f.kind === 'integer') {
      const n = Number(text);
      if (!Number.isFinite(n)) return { error: `${f.name}: "${text}" is not a number` };
      out[f.name] = n;
    } else if (f.kind === 'boolean') out[f.name] = text === 'true';
    else if (f.kind === 'string-list') out[f.name] = text.split('\n').map((s) => s.trim()).filter(Boolean);
    else if (f.kind === 'json') {
      try {
        out[f.name] = JSON.parse(text);
      } catch (err) {
        return { error: `${f.name}: not valid JSON (${(err as Error).message})` };
      }
    } else out[f.name] = text;
  }
  return { arguments: out };
}

/** Props of {@link SchemaForm}. */
export interface SchemaFormProps {
  fields: FormField[];
  values: FormValues;
  onChange: (name: string, value: string | string[]) => void;
}

/** How each kind of field is described next to its name. */
const KIND_LABEL: Record<FieldKind, string> = { string: 'text', enum: 'one of', number: 'number', integer: 'integer', boolean: 'true or false', 'enum-list': 'any of', 'string-list': 'list', json: 'JSON' };

/** A required mark: a visible asterisk, and the word for screen readers. */
function RequiredMark({ required }: { required: boolean }) {
  if (!required) return null;
  return (
    <>
      <span aria-hidden="true" className="required-mark">
        {' '}
        *
      </span>
      <span className="visually-hidden"> (required)</span>
    </>
  );
}

/** One field of the form. */
function Field({ field: f, value, onChange }: { field: FormField; value: string | string[] | undefined; onChange: (v: string | string[]) => void }) {
  const id = useId();
  const help = f.description ? `${id}-help` : undefined;
  const text = typeof value === 'string' ? value : '';
  const common = { id, name: f.name, 'aria-describedby': help, 'aria-required': f.required || undefined };
  let control;
  if (f.kind === 'enum-list') {
    const ticked = Array.isArray(value) ? value : [];
    return (
      <fieldset className="form-row schema-field">
        <legend>
          <code>{f.name}</code>
          <RequiredMark required={f.required} />
        </legend>
        <div className="actions-row">
          {f.options.map((o) => (
            <label key={o}>
              <input type="checkbox" checked={ticked.includes(o)} onChange={(e) => onChange(e.target.checked ? [...ticked, o] : ticked.filter((t) => t !== o))} /> {o}
            </label>
          ))}
        </div>
        {f.description ? <small className="muted">{f.description}</small> : null}
      </fieldset>
    );
  }
  if (f.kind === 'enum' || f.kind === 'boolean') {
    const options = f.kind === 'boolean' ? ['true', 'false'] : f.options;
    control = (
      <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
        <option value="">not set</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (f.kind === 'number' || f.kind === 'integer') {
    control = <input {...common} type="number" step={f.kind === 'integer' ? 1 : 'any'} inputMode={f.kind === 'integer' ? 'numeric' : 'decimal'} value={text} onChange={(e) => onChange(e.target.value)} />;
  } else if (f.kind === 'string') {
    control = <input {...common} type="text" value={text} onChange={(e) => onChange(e.target.value)} />;
  } else {
    control = (
      <textarea
        {...common}
        rows={f.kind === 'json' ? 4 : 3}
        className={f.kind === 'json' ? 'mono' : undefined}
        placeholder={f.kind === 'json' ? 'JSON, e.g. {"key": "value"}' : 'one value per line'}
        value={text}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  }
  return (
    <div className="form-row schema-field">
      <label htmlFor={id}>
        <code>{f.name}</code>
        <RequiredMark required={f.required} /> <span className="muted">({KIND_LABEL[f.kind]})</span>
      </label>
      {control}
      {f.description ? (
        <small id={help} className="muted">
          {f.description}
        </small>
      ) : null}
    </div>
  );
}

/** The form of a tool's input schema (the caller owns the values and the submit button). */
export function SchemaForm({ fields, values, onChange }: SchemaFormProps) {
  if (fields.length === 0) return <p className="muted">This tool takes no arguments.</p>;
  return (
    <>
      {fields.map((f) => (
        <Field key={f.name} field={f} value={values[f.name]} onChange={(v) => onChange(f.name, v)} />
      ))}
    </>
  );
}
