/**
 * Controls for actions that change data. With a read key they are disabled, and say why both as a tooltip (`title`)
 * and to assistive technology (`aria-describedby` pointing at the reason, rendered once by the layout).
 * Source: docs/console.md (write actions disabled with a tooltip saying why).
 */
import type { ButtonHTMLAttributes } from 'react';
import { useSession } from '../auth/session.js';

/** Id of the element holding the read-only reason (rendered by the layout, visually hidden). */
export const READ_ONLY_REASON_ID = 'read-only-reason';

/** A button for a write action: disabled, with the reason, when the session's key is read-only. */
export function WriteButton({ disabled, title, ...rest }: ButtonHTMLAttributes<HTMLButtonElement>) {
  const { readOnlyReason } = useSession();
  return (
    <button
      type="button"
      {...rest}
      disabled={disabled || readOnlyReason !== null}
      title={readOnlyReason ?? title}
      aria-describedby={readOnlyReason ? READ_ONLY_REASON_ID : rest['aria-describedby']}
      data-write-action=""
    />
  );
}
