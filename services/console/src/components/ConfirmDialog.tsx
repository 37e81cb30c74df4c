/**
 * A modal confirmation (the native `<dialog>`, so focus is trapped and Escape cancels) for actions with consequences,
 * such as engaging a kill switch. Shows the action's error inside the dialog when it fails.
 */
import { useEffect, useId, useRef, type ReactNode } from 'react';
import { ProblemMessage } from './States.js';

/** Props of {@link ConfirmDialog}. */
export interface ConfirmDialogProps {
  /** Whether the dialog is shown. */
  open: boolean;
  title: string;
  /** What will happen, and anything to enter (e.g. a reason). */
  children: ReactNode;
  /** Label of the confirming button (e.g. "Engage kill switch"). */
  confirmLabel: string;
  /** Style the confirming button as dangerous. */
  danger?: boolean;
  /** While true the buttons are disabled. */
  busy?: boolean;
  /** The last error of the action, shown in the dialog. */
  error?: unknown;
  onConfirm: () => void;
  onCancel: () => void;
}

/** A modal dialog asking to confirm an action. */
export function ConfirmDialog({ open, title, children, confirmLabel, danger, busy, error, onConfirm, onCancel }: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  // Its own title id, so a page may hold several dialogs.
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className="confirm-dialog"
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div className="confirm-dialog-body">{children}</div>
      {error ? <ProblemMessage error={error} /> : null}
      <div className="confirm-dialog-actions">
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="button" className={danger ? 'danger' : 'primary'} onClick={onConfirm} disabled={busy}>
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
