/**
 * A SQL `WHERE` clause built condition by condition, each value bound as the next numbered parameter (`$1`, `$2`, …),
 * for the read models' filtered queries. Values never enter the SQL text, so a filter's value cannot change the
 * statement. Source: architecture §3 (Read models).
 */
export class WhereClause {
  /** The bound values in placeholder order (`$1` first): the query's parameters. Values bound after the clause (a `LIMIT`) follow. */
  readonly params: unknown[] = [];
  private readonly conditions: string[] = [];

  /** Bind `value` as the next parameter. @returns its placeholder, e.g. `$3`. */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  /** Add `condition` (SQL whose values are bound with {@link param}, e.g. `` `agent_id = ${w.param(id)}` ``). */
  and(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** How many conditions the clause holds. */
  get size(): number {
    return this.conditions.length;
  }

  /** The conditions joined with `AND`, without the keyword `WHERE`; `true` when there are none. */
  toString(): string {
    return this.conditions.length ? this.conditions.join(' AND ') : 'true';
  }
}
