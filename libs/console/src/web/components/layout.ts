import { api } from '../lib/api';
import { h, replace } from '../lib/dom';
import { planInEffect, planName } from '../lib/format';
import { href, navigate } from '../lib/router';
import { session } from '../lib/session';
import type { Account } from '../lib/types';
import { icon, IconName, logo } from './icons';
import { toast } from './toast';
import { badge } from './ui';

export const PRODUCT = 'Classic Car Auction Data';

const NAV: { key: string; label: string; to: string; icon: IconName }[] = [
  { key: 'overview', label: 'Overview', to: '', icon: 'overview' },
  { key: 'keys', label: 'API keys', to: 'keys', icon: 'key' },
  { key: 'webhooks', label: 'Webhooks', to: 'webhooks', icon: 'webhook' },
  { key: 'market', label: 'Market', to: 'market', icon: 'chart' },
  { key: 'settings', label: 'Settings', to: 'settings', icon: 'settings' },
];

export async function signOut(): Promise<void> {
  try {
    await api.signOut();
  } catch {
    // Signed out either way: the cookie is gone or was already invalid.
  }
  session.clear();
  navigate('signin', { replace: true });
  toast('You have been signed out.', 'info');
}

/**
 * The signed-in frame: sidebar navigation (a drawer behind a menu button on narrow screens),
 * the account's email and plan, and the main region the pages render into.
 */
export class AppShell {
  readonly element: HTMLElement;
  readonly main: HTMLElement;
  private readonly links = new Map<string, HTMLAnchorElement>();
  private readonly accountBox = h('div', { class: 'sidebar-account' });
  private readonly menuButton: HTMLButtonElement;
  private readonly sidebar: HTMLElement;

  constructor() {
    const navList = h(
      'ul',
      { class: 'nav-list' },
      NAV.map((item) => {
        const link = h('a', { class: 'nav-link', href: href(item.to) }, icon(item.icon, 18), h('span', null, item.label));
        this.links.set(item.key, link);
        return h('li', null, link);
      }),
    );
    this.sidebar = h(
      'aside',
      { class: 'sidebar', id: 'sidebar' },
      h('a', { class: 'brand', href: href('') }, logo(28), h('span', { class: 'brand-text' }, h('strong', null, 'Auction Data'), h('span', null, 'Console'))),
      h('nav', { 'aria-label': 'Console' }, navList),
      h('div', { class: 'sidebar-footer' }, this.accountBox),
    );
    this.menuButton = h(
      'button',
      {
        type: 'button',
        class: 'icon-btn menu-btn',
        'aria-controls': 'sidebar',
        'aria-expanded': 'false',
        'aria-label': 'Open navigation',
        onclick: () => this.toggleMenu(),
      },
      icon('menu', 20),
    );
    const topbar = h(
      'header',
      { class: 'topbar' },
      this.menuButton,
      h('a', { class: 'brand brand-compact', href: href('') }, logo(24), h('strong', null, 'Auction Data')),
    );
    this.main = h('main', { class: 'main', id: 'main', tabindex: '-1' });
    const scrim = h('div', { class: 'scrim', 'aria-hidden': 'true', onclick: () => this.toggleMenu(false) });
    this.element = h('div', { class: 'shell' }, topbar, this.sidebar, scrim, h('div', { class: 'content' }, this.main));
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.element.classList.contains('menu-open')) {
        this.toggleMenu(false);
        this.menuButton.focus();
      }
    });
    session.subscribe((account) => this.renderAccount(account));
    this.renderAccount(session.account);
  }

  setActive(key: string | undefined): void {
    for (const [name, link] of this.links) {
      if (name === key) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    this.toggleMenu(false);
  }

  private toggleMenu(open = !this.element.classList.contains('menu-open')): void {
    this.element.classList.toggle('menu-open', open);
    this.menuButton.setAttribute('aria-expanded', String(open));
    this.menuButton.setAttribute('aria-label', open ? 'Close navigation' : 'Open navigation');
    if (open) this.links.get('overview')?.focus();
  }

  private renderAccount(account: Account | null): void {
    if (!account) return replace(this.accountBox);
    replace(
      this.accountBox,
      h('div', { class: 'avatar', 'aria-hidden': 'true' }, account.email.charAt(0).toUpperCase()),
      h(
        'div',
        { class: 'sidebar-account-text' },
        h('span', { class: 'sidebar-email', title: account.email }, account.email),
        badge(`${planName(planInEffect(account))} plan`, planInEffect(account) === 'free' ? 'gray' : 'violet'),
      ),
      h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Sign out', title: 'Sign out', onclick: () => void signOut() }, icon('logout', 16)),
    );
  }
}

/** The signed-out frame: a centred card with the product mark. */
export function authFrame(...children: Node[]): HTMLElement {
  return h(
    'div',
    { class: 'auth' },
    h('main', { class: 'auth-main', id: 'main', tabindex: '-1' }, h('a', { class: 'auth-brand', href: href('signin') }, logo(36), h('span', null, PRODUCT)), children),
    h('footer', { class: 'auth-footer' }, h('a', { href: '/docs' }, 'API reference'), h('span', { 'aria-hidden': 'true' }, '·'), h('a', { href: '/openapi.json' }, 'OpenAPI document')),
  );
}
