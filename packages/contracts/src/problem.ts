import { z } from 'zod';

/** RFC 9457 problem details as AGP returns them. Source: ARCHITECTURE.md §4 (Errors). */
export const ProblemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  errors: z
    .array(z.object({ path: z.string(), message: z.string(), allowed: z.array(z.string()).optional() }))
    .optional(),
});
