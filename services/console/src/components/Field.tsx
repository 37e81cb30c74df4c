/**
 * A labelled form input with its hint and, after a 422, the API's messages for its body path shown under it (the
 * input marked `aria-invalid` and described by them), and {@link errorsAt}, which picks those messages out of a
 * problem's field errors. Forms show the whole problem (ProblemMessage) as well. Source: docs/console.md (forms).
 */
import type { ReactNode } from 'react';
import type { ProblemFieldError } from '../api/client.js';

/**
 * The 422 field errors at `path` (a body field path such as `guardrails.loop.threshold` or `channels.0.channel`) or
 * inside it: those whose path is `body.<path>` or starts with `body.<path>.`.
 */
export function errorsAt(errors: readonly ProblemFieldError[], path: string): ProblemFieldError[] {
  const full = `body.${path}`;
  return errors.filter((e) => e.path === full || e.path.startsWith(`${full}.`));
}

/** Props of {@link Field}. */
export interface FieldProps {
  id: string;
  label: string;
  /** The body path whose 422 errors show under the input (errors inside it too, unless `exact`). */
  path: string;
  errors: readonly ProblemFieldError[];
  /** Show only the errors at `path` itself, not those inside it (e.g. a row whose numbers have their own inputs). */
  exact?: boolean;
  /** A message of the form's own (a row it cannot send), shown like the API's. */
  local?: string;
  hint?: string;
  /** The input, given the attributes that tie it to the label, hint and errors. */
  children: (a: { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string }) => ReactNode;
}

/** A labelled input with its hint and, after a 422, the API's messages for its path (announced with the input). */
export function Field({ id, label, path, errors, exact, local, hint, children }: FieldProps) {
  const mine = [...(exact ? errors.filter((e) => e.path === `body.${path}`) : errorsAt(errors, path)), ...(local ? [{ path, message: local }] : [])];
  const described = [hint ? `${id}-hint` : '', mine.length ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="form-row">
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(mine.length ? { 'aria-invalid': true as const } : {}), ...(described ? { 'aria-describedby': described } : {}) })}
      {hint ? (
        <span id={`${id}-hint`} className="muted field-hint">
          {hint}
        </span>
      ) : null}
      {mine.length ? (
        <span id={`${id}-error`} className="field-error">
          {mine.map((e) => e.message).join('; ')}
        </span>
      ) : null}
    </div>
  );
}
