/**
 * Arguments checked against the agent's registered action definitions (`parameters`, a JSON Schema) before any
 * decision, with Ajv (draft-07 semantics; a `$schema` keyword is ignored). Source: docs/sdk.md §Bad input.
 */
import AjvModule from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';

/** An action definition as `POST /api/v1/agents` takes it. */
export interface ActionDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
  risk_level?: 'critical' | 'high' | 'medium' | 'low' | 'minimal';
  /** USD. */
  typical_cost_usd?: number;
}

// ajv is CommonJS: its class is the module itself or its `default`, depending on the loader.
const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule;

/** Compiled validators by action name. */
export class ActionSchemas {
  private readonly validators = new Map<string, ValidateFunction | null>();

  /**
   * @throws TypeError naming the action when a definition is malformed or its `parameters` is not a valid JSON Schema.
   */
  constructor(readonly actions: readonly ActionDefinition[]) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    for (const a of actions) {
      if (!a || typeof a.name !== 'string' || !a.name) throw new TypeError('each action definition needs a non-empty name');
      if (a.parameters === undefined) {
        this.validators.set(a.name, null);
        continue;
      }
      const { $schema: _ignored, ...schema } = a.parameters;
      try {
        this.validators.set(a.name, ajv.compile(schema));
      } catch (err) {
        throw new TypeError(`action ${a.name}: parameters is not a valid JSON Schema: ${(err as Error).message}`);
      }
    }
  }

  /** Whether any action is registered (then unknown names are refused). */
  get registered(): boolean {
    return this.validators.size > 0;
  }

  /** The definition of `name`, if registered. */
  definition(name: string): ActionDefinition | undefined {
    return this.actions.find((a) => a.name === name);
  }

  /**
   * @throws TypeError naming the action, and each bad field as a dotted path (`items.0.sku`), when `name` is not
   *   registered or `args` does not match its schema. `.fields` lists the paths.
   */
  check(name: string, args: Record<string, unknown>): void {
    if (!this.registered) return;
    if (!this.validators.has(name)) {
      throw Object.assign(new TypeError(`unknown action "${name}": registered actions are ${[...this.validators.keys()].join(', ')}`), { fields: ['action_name'] });
    }
    const v = this.validators.get(name);
    if (!v || v(args)) return;
    const problems = (v.errors ?? []).map(describe);
    throw Object.assign(new TypeError(`invalid arguments for ${name}: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`), { fields: problems.map((p) => p.field) });
  }
}

/** One Ajv error as a dotted field path and a message. */
function describe(e: ErrorObject): { field: string; message: string } {
  const base = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const p = e.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
  if (e.keyword === 'required' && p.missingProperty) return { field: [...base, p.missingProperty].join('.'), message: 'is required' };
  if (e.keyword === 'additionalProperties' && p.additionalProperty) return { field: [...base, p.additionalProperty].join('.'), message: 'is not an allowed field' };
  const allowed = e.keyword === 'enum' && p.allowedValues ? ` (allowed: ${p.allowedValues.map((x) => JSON.stringify(x)).join(', ')})` : '';
  return { field: base.join('.') || '(arguments)', message: `${e.message ?? 'is invalid'}${allowed}` };
}
