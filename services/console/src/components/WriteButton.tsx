/**
 * Controls for actions that change data. With a read key they are disabled, and say why both as a tooltip (`title`)
 * and to assistive technology (`aria-describedby` pointing at the reason, rendered once by the layout).
 * Source: docs/console.md (write actions disabled with a tooltip saying why).
 */
import type { ButtonHTMLAttributes } from 'react';
import { useSession } from '../auth/session.js';

/** Id of the element holding the read-only reason (rendered by the layout, visually hidden). */
export const READ_ONLY_REASON_ID = 'read-only-reason';
/** Id of the element holding the reason an admin-only action is disabled (rendered by the layout, visually hidden). */
export const NOT_ADMIN_REASON_ID = 'not-admin-reason';

/** Props of {@link WriteButton}: a button's, and `admin` for an action only an admin may take. */
export type WriteButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & { admin?: boolean };

/**
 * A button for a write action: disabled, with the reason, when the session's key is read-only; with `admin`, also
 * when the session is not an admin (a write key, or a person without the admin role).
 */
export function WriteButton({ disabled, title, admin, ...rest }: WriteButtonProps) {
  const { readOnlyReason, notAdminReason } = useSession();
  const [reason, reasonId] = readOnlyReason ? [readOnlyReason, READ_ONLY_REASON_ID] : admin && notAdminReason ? [notAdminReason, NOT_ADMIN_REASON_ID] : [null, null];
  return (
    <button
      type="button"
      {...rest}
      disabled={disabled || reason !== null}
      title={reason ?? title}
      aria-describedby={reasonId ?? rest['aria-describedby']}
      data-write-action=""
    />
  );
}
