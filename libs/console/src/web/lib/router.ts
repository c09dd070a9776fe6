/** History-API routing under /console: `/console/webhooks/:id` style patterns. */
export const BASE = '/console';

export interface PageContext {
  params: Record<string, string>;
  query: URLSearchParams;
  /** Aborted when the user leaves the page: stop polling, drop late answers. */
  signal: AbortSignal;
}

export type Access = 'signed-in' | 'signed-out' | 'any';

export interface Route {
  /** Relative to /console, e.g. `webhooks/:id`. */
  path: string;
  title: string;
  access: Access;
  /** The sidebar entry to highlight. */
  nav?: string;
  render(context: PageContext): Node;
}

export interface Match {
  route: Route;
  params: Record<string, string>;
}

export function match(routes: readonly Route[], pathname: string): Match | null {
  const relative = pathname.replace(/^\/console\/?/, '').replace(/\/+$/, '');
  const parts = relative === '' ? [] : relative.split('/');
  for (const route of routes) {
    const pattern = route.path === '' ? [] : route.path.split('/');
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = pattern.every((segment, index) => {
      const part = parts[index] ?? '';
      if (segment.startsWith(':')) {
        try {
          params[segment.slice(1)] = decodeURIComponent(part);
        } catch {
          return false;
        }
        return part !== '';
      }
      return segment === part;
    });
    if (ok) return { route, params };
  }
  return null;
}

/** `/console` + a relative path. */
export function href(path = ''): string {
  return path === '' ? BASE : `${BASE}/${path.replace(/^\//, '')}`;
}

type NavigateListener = () => void;
const navigateListeners = new Set<NavigateListener>();

export function onNavigate(listener: NavigateListener): void {
  navigateListeners.add(listener);
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const target = to.startsWith('/') ? to : href(to);
  if (options.replace) history.replaceState(null, '', target);
  else history.pushState(null, '', target);
  navigateListeners.forEach((listener) => listener());
}

/** Same-origin links under /console move through the router instead of reloading the page. */
export function interceptLinks(root: Document): void {
  root.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest('a');
    if (!anchor || anchor.target || anchor.hasAttribute('download')) return;
    const url = new URL(anchor.href, location.href);
    if (url.origin !== location.origin || !(url.pathname === BASE || url.pathname.startsWith(`${BASE}/`))) return;
    if (url.hash && url.pathname === location.pathname && url.search === location.search) return; // an in-page anchor
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
  window.addEventListener('popstate', () => navigateListeners.forEach((listener) => listener()));
}
