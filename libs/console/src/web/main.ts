import { AppShell, PRODUCT } from './components/layout';
import { mountToasts, toast } from './components/toast';
import { onSessionExpired } from './lib/api';
import { replace } from './lib/dom';
import { href, interceptLinks, match, navigate, onNavigate, Route } from './lib/router';
import { session } from './lib/session';
import { signInPage, signUpPage, verifyPage } from './pages/auth';
import { keysPage } from './pages/keys';
import { marketPage } from './pages/market';
import { overviewPage } from './pages/overview';
import { fatalError, notFoundPage, settingsPage } from './pages/settings';
import { editWebhookPage, newWebhookPage } from './pages/webhook-form';
import { webhookDetailPage } from './pages/webhook-detail';
import { webhooksPage } from './pages/webhooks';

const ROUTES: Route[] = [
  { path: '', title: 'Overview', access: 'signed-in', nav: 'overview', render: overviewPage },
  { path: 'keys', title: 'API keys', access: 'signed-in', nav: 'keys', render: keysPage },
  { path: 'webhooks', title: 'Webhooks', access: 'signed-in', nav: 'webhooks', render: webhooksPage },
  { path: 'webhooks/new', title: 'Add an endpoint', access: 'signed-in', nav: 'webhooks', render: newWebhookPage },
  { path: 'webhooks/:id', title: 'Endpoint', access: 'signed-in', nav: 'webhooks', render: webhookDetailPage },
  { path: 'webhooks/:id/edit', title: 'Edit endpoint', access: 'signed-in', nav: 'webhooks', render: editWebhookPage },
  { path: 'market', title: 'Market', access: 'signed-in', nav: 'market', render: marketPage },
  { path: 'settings', title: 'Settings', access: 'signed-in', nav: 'settings', render: settingsPage },
  { path: 'signin', title: 'Sign in', access: 'signed-out', render: signInPage },
  { path: 'signup', title: 'Create your account', access: 'signed-out', render: signUpPage },
  { path: 'verify', title: 'Verify your email', access: 'any', render: verifyPage },
];

const NOT_FOUND: Route = { path: '*', title: 'Not found', access: 'signed-in', render: notFoundPage };

const app = document.getElementById('app') as HTMLElement;
let shell: AppShell | null = null;
let current: AbortController | null = null;
let firstRender = true;

async function render(): Promise<void> {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const found = match(ROUTES, location.pathname) ?? { route: NOT_FOUND, params: {} };
  const { route, params } = found;
  const account = await session.load();
  if (controller.signal.aborted) return;

  if (route.access === 'signed-in' && !account) {
    const next = location.pathname + location.search;
    return navigate(`${href('signin')}${next === href('') ? '' : `?next=${encodeURIComponent(next)}`}`, { replace: true });
  }
  if (route.access === 'signed-out' && account) return navigate(href(''), { replace: true });

  document.title = `${route.title} · ${PRODUCT}`;
  const context = { params, query: new URLSearchParams(location.search), signal: controller.signal };
  // The verification page uses the app frame when signed in, and the sign-in frame otherwise.
  const framed = route.access === 'signed-in' || (route.access === 'any' && account !== null && route.path !== 'verify');
  if (framed) {
    shell ??= new AppShell();
    if (shell.element.parentElement !== app) replace(app, shell.element);
    shell.setActive(route.nav);
    replace(shell.main, route.render(context));
    window.scrollTo(0, 0);
  } else {
    replace(app, route.render(context));
  }
  // Move focus to the new page's heading, so screen readers announce it (not on the first load).
  if (!firstRender) {
    const heading = app.querySelector<HTMLElement>('h1');
    (heading ?? app.querySelector<HTMLElement>('#main'))?.focus({ preventScroll: true });
  }
  firstRender = false;
}

function start(): void {
  mountToasts(document.body);
  interceptLinks(document);
  onNavigate(() => void render().catch((error: unknown) => fatalError(app, error)));
  onSessionExpired(() => {
    if (!session.account) return;
    session.clear();
    toast('Sign in again to continue.', 'info', 'Your session has ended');
    navigate(`${href('signin')}?reason=expired&next=${encodeURIComponent(location.pathname)}`, { replace: true });
  });
  void render().catch((error: unknown) => fatalError(app, error));
}

start();
