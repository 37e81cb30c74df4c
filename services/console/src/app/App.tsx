/**
 * The app: sign-in until a key is kept, then the layout with the page of the current route. Pages load lazily;
 * a page that throws while rendering shows the error instead of a blank screen.
 */
import { Component, Suspense, type ReactNode } from 'react';
import { Route, Routes, useLocation } from 'react-router';
import { SignInPage } from '../auth/SignInPage.js';
import { useSession } from '../auth/session.js';
import { Empty, Loading, ProblemMessage } from '../components/States.js';
import { PageHeader } from '../components/PageHeader.js';
import { Layout } from './Layout.js';
import { ROUTES } from './routes.js';

/** Catches a render error of one page (reset when the route changes). */
class PageBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  state = { error: null as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  render() {
    return this.state.error ? <ProblemMessage error={this.state.error} /> : this.props.children;
  }
}

function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <Empty>There is no console page at this address. Use the navigation to pick one.</Empty>
    </>
  );
}

/** The console: sign-in, or the signed-in shell and its routes. */
export function App() {
  const { signedIn } = useSession();
  const location = useLocation();
  if (!signedIn) return <SignInPage />;
  return (
    <Layout>
      <PageBoundary key={location.pathname}>
        <Suspense fallback={<Loading what="page" />}>
          <Routes>
            {ROUTES.map(({ path, component: Page }) => (
              <Route key={path} path={path} element={<Page />} />
            ))}
            <Route path="*" element={<NotFound />} />
          </Routes>
        </Suspense>
      </PageBoundary>
    </Layout>
  );
}
