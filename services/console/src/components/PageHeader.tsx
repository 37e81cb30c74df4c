/**
 * A page's heading and document title. Its own module in `components/` so that pages import it without importing the
 * shell (`app/Layout.tsx`), which imports the route list and so every page.
 */
import { useEffect, type ReactNode } from 'react';

/** A page's heading (its `h1`) and document title, with an optional line under it. */
export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · AGP console`;
  }, [title]);
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children ? <div className="page-lede">{children}</div> : null}
    </div>
  );
}
