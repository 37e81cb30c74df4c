/**
 * Who made a change: the acting key's name (as it was when it acted) beside its id (`key:<uuid>`), or the id alone
 * when the key had no name or the actor is not a key (`system`, `approver:<email>`). The id stays in a `code` element
 * with the full value as its title, so it can be copied and matched against the key list.
 */
export function Actor({ id, name }: { id: string | null | undefined; name?: string | null }) {
  if (!id) return <span className="muted">—</span>;
  return (
    <span className="actor">
      {name ? <strong className="actor-name">{name}</strong> : null}
      {name ? ' ' : null}
      <code className="actor-id" title={id}>
        {name ? `(${id})` : id}
      </code>
    </span>
  );
}
