import { z } from 'zod';

/** One invalid field of a 422: a dotted `path` into the input, a human `message`, and for enums the `allowed` values. */
export const FieldErrorSchema = z.object({ path: z.string(), message: z.string(), allowed: z.array(z.string()).optional() });
/** See {@link FieldErrorSchema}. */
export type FieldError = z.infer<typeof FieldErrorSchema>;

/**
 * RFC 9457 problem details as AGP returns them (`application/problem+json`): `type` (a URI per status), `title`,
 * `status`, `detail`, optionally `instance`, and for a 422 `errors` naming each bad field. The one definition: the
 * runtime's `Problem` type is inferred from it. Source: architecture §4 (Errors).
 */
export const ProblemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  instance: z.string().optional(),
  errors: z.array(FieldErrorSchema).optional(),
});
/** See {@link ProblemSchema}. */
export type Problem = z.infer<typeof ProblemSchema>;
