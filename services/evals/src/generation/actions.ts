/**
 * What the template pass reads from an agent's registered action definitions (`RegisteredAction`: name, description,
 * parameter JSON Schema, risk level, typical cost USD): whether an action only reads, which parameters name an object
 * by id or carry a time, which read action looks an object up, and sample arguments that fit the parameter schema.
 * Pure. Source: docs/scenario-format.md (What the generator writes; template pass: "from the agent's registered action definitions").
 */
import type { RegisteredAction } from '@agp/contracts';
import { daysAgoToken } from '@agp/scenario-file';
import type { SeededRandom } from './rng.js';

/** Leading verbs of actions that only read (lookups, searches, checks): they never count as the risky step. */
export const READ_VERBS: ReadonlySet<string> = new Set([
  'get', 'lookup', 'look', 'find', 'search', 'fetch', 'read', 'list', 'query', 'check', 'verify', 'retrieve', 'view', 'describe', 'show', 'inspect', 'validate', 'load', 'count', 'browse',
]);

/** A parameter name that identifies an object: `id`, `order_id`, `orderId`, `customer_ids`. */
const ID_PARAM = /^(?:id|ids|.+(?:_id|_ids|Id|Ids|ID))$/;
/** A parameter name that carries a time or the freshness of evidence. */
const TIME_PARAM = /(?:timestamp|_at$|^at$|date|_time$|^time$|as_of|asof|evidence|verified|checked|observed|fetched|retrieved|^since$)/i;

/** A JSON Schema node as the template pass reads it (every field optional; anything else ignored). */
interface JsonSchema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, unknown>;
  required?: string[];
  items?: unknown;
  anyOf?: unknown[];
  oneOf?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
}

/** An id parameter and the kind of object it names (`order_id` → `order`; a bare `id` → the action's object). */
export interface IdParam {
  name: string;
  entity: string;
}

/** One registered action as the template pass sees it. */
export interface ActionProfile {
  action: RegisteredAction;
  /** Lowercase words of the name (`issueRefund`, `issue_refund` → `issue`, `refund`). */
  words: string[];
  /** Whether the first word is one of {@link READ_VERBS}. */
  read: boolean;
  /** Top-level parameters (name → JSON Schema). */
  properties: Record<string, JsonSchema>;
  idParams: IdParam[];
  /** Top-level string parameters that carry a time (by name or `format: date-time|date`). */
  timeParams: string[];
}

/** Lowercase words of an identifier: split at `_`, `-`, `.`, `/`, spaces and camelCase humps. */
export function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

const singular = (w: string) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);

const asSchema = (v: unknown): JsonSchema => (v && typeof v === 'object' && !Array.isArray(v) ? (v as JsonSchema) : {});
/** `v` when it is a finite number, else undefined (registered schemas are any JSON: `minimum: "x"` is ignored). */
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
/** Most properties of one object, and longest string, a sample holds. */
const MAX_SAMPLE_PROPERTIES = 50;
const MAX_SAMPLE_STRING = 1000;

/**
 * The top-level parameters of a parameter schema: its `properties` (a JSON Schema object), or the schema itself when
 * it is written as a map of parameter name → schema (every value an object with a `type`).
 */
function topLevelProperties(parameters: Record<string, unknown> | null): Record<string, JsonSchema> {
  if (!parameters) return {};
  const props = asSchema(parameters).properties;
  if (props && typeof props === 'object' && !Array.isArray(props)) return Object.fromEntries(Object.entries(props).slice(0, MAX_SAMPLE_PROPERTIES).map(([k, v]) => [k, asSchema(v)]));
  const values = Object.values(parameters);
  if (values.length && values.every((v) => v && typeof v === 'object' && 'type' in (v as object))) {
    return Object.fromEntries(Object.entries(parameters).slice(0, MAX_SAMPLE_PROPERTIES).map(([k, v]) => [k, asSchema(v)]));
  }
  return {};
}

/** The first type of a schema node that is not `null` (`type: ['string', 'null']` → `string`). */
function typeOf(s: JsonSchema): string | undefined {
  const t: unknown = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  if (typeof t === 'string') return t;
  if (s.properties) return 'object';
  if (s.items) return 'array';
  return undefined;
}

/** Profile one registered action (see {@link ActionProfile}). */
export function profileAction(action: RegisteredAction): ActionProfile {
  const w = words(action.name);
  const properties = topLevelProperties(action.parameters);
  const noun = w.slice(1).map(singular).join('_') || w.map(singular).join('_') || 'item';
  const idParams: IdParam[] = [];
  const timeParams: string[] = [];
  for (const [name, schema] of Object.entries(properties)) {
    const type = typeOf(schema);
    if (ID_PARAM.test(name) && (type === undefined || type === 'string' || type === 'integer' || type === 'number')) {
      const own = words(name).filter((x) => x !== 'id' && x !== 'ids').map(singular).join('_');
      idParams.push({ name, entity: own || noun });
    } else if ((type === undefined || type === 'string') && (TIME_PARAM.test(name) || schema.format === 'date-time' || schema.format === 'date')) {
      timeParams.push(name);
    }
  }
  return { action, words: w, read: READ_VERBS.has(w[0] ?? ''), properties, idParams, timeParams };
}

/**
 * Read actions that establish `entity` before a write: their name names it (`lookup_order` for `order`) or one of
 * their id parameters does. Sorted by name.
 */
export function readersOf(entity: string, profiles: readonly ActionProfile[]): ActionProfile[] {
  const parts = entity.split('_');
  return profiles
    .filter((p) => p.read && (p.idParams.some((i) => i.entity === entity) || parts.every((part) => p.words.slice(1).map(singular).includes(part))))
    .sort((a, b) => (a.action.name < b.action.name ? -1 : a.action.name > b.action.name ? 1 : 0));
}

/** Other registered actions that `p`'s description names as a step to take first (`… call lookup_order first`). */
export function namedPrerequisites(p: ActionProfile, profiles: readonly ActionProfile[]): ActionProfile[] {
  const text = p.action.description ?? '';
  if (!text) return [];
  return profiles.filter((o) => o !== p && new RegExp(`(^|[^A-Za-z0-9_])${o.action.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_])`).test(text));
}

/** A made-up id for an object of `entity` that fits the parameter's type (`order-3fa9c1`, or a 6-digit number). */
export function fabricateId(entity: string, schema: JsonSchema, rng: SeededRandom): string | number {
  const type = typeOf(schema);
  if (type === 'integer' || type === 'number') return rng.int(100_000, 999_999);
  return `${entity.replace(/_/g, '-')}-${rng.hex(6)}`;
}

/** Whether a time parameter wants a date only (`format: date`, or a name with `date` but not `time`). */
export function wantsDateOnly(name: string, schema: JsonSchema): boolean {
  return schema.format === 'date' || (/date/i.test(name) && !/time/i.test(name) && schema.format !== 'date-time');
}

/**
 * A value that fits a JSON Schema node: its `const`, an `enum` member, the first non-null `anyOf`/`oneOf` branch, and
 * by type: ids made up ({@link fabricateId}), times as the `{{now}}` token, numbers within `minimum`/`maximum`, one
 * array item, every object property (nesting up to 3 levels). Deterministic for a given `rng` state.
 */
export function sampleValue(node: unknown, name: string, rng: SeededRandom, depth = 0): unknown {
  const s = asSchema(node);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return rng.pick(s.enum);
  const branches = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : [];
  const branch = branches.find((b) => typeOf(asSchema(b)) !== 'null');
  if (branch) return sampleValue(branch, name, rng, depth);
  switch (typeOf(s)) {
    case 'integer':
    case 'number': {
      const exMin = num(s.exclusiveMinimum);
      const exMax = num(s.exclusiveMaximum);
      const min = num(s.minimum) ?? (exMin !== undefined ? exMin + 1 : ID_PARAM.test(name) ? 100_000 : 1);
      const max = num(s.maximum) ?? (exMax !== undefined ? exMax - 1 : ID_PARAM.test(name) ? 999_999 : Math.max(min, 1) * 500);
      if (typeOf(s) === 'integer') return Math.ceil(min) > Math.floor(max) ? Math.ceil(min) : rng.int(Math.ceil(min), Math.floor(max));
      return max < min ? min : Math.round((min + rng.next() * (max - min)) * 100) / 100;
    }
    case 'boolean':
      return true;
    case 'array':
      return depth >= 3 ? [] : Array.from({ length: Math.min(Math.max(num(s.minItems) ?? 1, 1), 3) }, () => sampleValue(s.items, name, rng, depth + 1));
    case 'object': {
      const props = s.properties && typeof s.properties === 'object' && !Array.isArray(s.properties) ? s.properties : {};
      return depth >= 3 ? {} : Object.fromEntries(Object.entries(props).slice(0, MAX_SAMPLE_PROPERTIES).map(([k, v]) => [k, sampleValue(v, k, rng, depth + 1)]));
    }
    default:
      return sampleString(s, name, rng);
  }
}

function sampleString(s: JsonSchema, name: string, rng: SeededRandom): string {
  let v: string;
  if (s.format === 'date-time') v = '{{now}}';
  else if (s.format === 'date') v = daysAgoToken(0, true);
  else if (s.format === 'email' || /email/i.test(name)) v = `user-${rng.hex(4)}@example.com`;
  else if (s.format === 'uri' || s.format === 'url' || /(^|_)(url|uri|link)$/i.test(name)) v = `https://example.com/${rng.hex(8)}`;
  else if (s.format === 'uuid') v = `${rng.hex(8)}-${rng.hex(4)}-4${rng.hex(3)}-a${rng.hex(3)}-${rng.hex(12)}`;
  else if (ID_PARAM.test(name)) v = `${words(name).filter((w) => w !== 'id' && w !== 'ids').join('-') || 'item'}-${rng.hex(6)}`;
  else v = `example ${name.replace(/_/g, ' ')}`;
  const maxLength = num(s.maxLength);
  const minLength = Math.min(num(s.minLength) ?? 0, MAX_SAMPLE_STRING);
  if (maxLength !== undefined && v.length > maxLength) v = v.slice(0, Math.max(0, maxLength));
  if (v.length < minLength) v = v.padEnd(minLength, 'x');
  return v;
}

/**
 * Arguments for one call of `p`: a sample of every top-level parameter (ids made up, times fresh: `{{now}}`, others
 * {@link sampleValue}), then `overrides` (values the scenario needs, e.g. an id shared with a prior call or a stale
 * time token).
 */
export function sampleArguments(p: ActionProfile, rng: SeededRandom, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(p.properties)) {
    const id = p.idParams.find((i) => i.name === name);
    if (id) out[name] = fabricateId(id.entity, schema, rng);
    else if (p.timeParams.includes(name)) out[name] = wantsDateOnly(name, schema) ? daysAgoToken(0, true) : '{{now}}';
    else out[name] = sampleValue(schema, name, rng, 1);
  }
  return { ...out, ...overrides };
}
