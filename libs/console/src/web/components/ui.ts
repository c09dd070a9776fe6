import { Child, h, Props, uid } from '../lib/dom';
import type { HumanError } from '../lib/messages';
import { href } from '../lib/router';
import { icon, IconName } from './icons';

type Variant = 'primary' | 'secondary' | 'danger' | 'ghost';

export interface ButtonOptions {
  variant?: Variant;
  icon?: IconName;
  type?: 'button' | 'submit';
  size?: 'sm' | 'md';
  onclick?: (event: MouseEvent) => void;
  attrs?: Props;
}

export function button(label: string, options: ButtonOptions = {}): HTMLButtonElement {
  return h(
    'button',
    {
      type: options.type ?? 'button',
      class: ['btn', `btn-${options.variant ?? 'secondary'}`, options.size === 'sm' && 'btn-sm'],
      onclick: options.onclick,
      ...options.attrs,
    },
    options.icon ? icon(options.icon, options.size === 'sm' ? 14 : 16) : null,
    h('span', null, label),
  );
}

/** A link styled as a button, routed inside the console. */
export function linkButton(label: string, to: string, options: { variant?: Variant; icon?: IconName; size?: 'sm' | 'md' } = {}): HTMLAnchorElement {
  return h(
    'a',
    { href: href(to), class: ['btn', `btn-${options.variant ?? 'secondary'}`, options.size === 'sm' && 'btn-sm'] },
    options.icon ? icon(options.icon, 16) : null,
    h('span', null, label),
  );
}

/** Runs an action with the button disabled and a busy state, so a double click sends once. */
export async function busy<T>(control: HTMLButtonElement | null, action: () => Promise<T>): Promise<T> {
  if (control) {
    control.disabled = true;
    control.setAttribute('aria-busy', 'true');
    control.classList.add('is-busy');
  }
  try {
    return await action();
  } finally {
    if (control) {
      control.disabled = false;
      control.removeAttribute('aria-busy');
      control.classList.remove('is-busy');
    }
  }
}

export type Tone = 'green' | 'red' | 'amber' | 'blue' | 'gray' | 'violet';

export function badge(label: string, tone: Tone = 'gray', options: { dot?: boolean; title?: string } = {}): HTMLSpanElement {
  return h('span', { class: ['badge', `badge-${tone}`], title: options.title }, options.dot ? h('span', { class: 'badge-dot', 'aria-hidden': 'true' }) : null, label);
}

export function pageHeader(title: string, options: { description?: Child; actions?: Child[]; back?: { label: string; to: string } } = {}): HTMLElement {
  return h(
    'header',
    { class: 'page-header' },
    options.back
      ? h('a', { class: 'back-link', href: href(options.back.to) }, icon('back', 14), h('span', null, options.back.label))
      : null,
    h(
      'div',
      { class: 'page-header-row' },
      h('div', { class: 'page-header-text' }, h('h1', { tabindex: '-1' }, title), options.description ? h('p', { class: 'page-description' }, options.description) : null),
      options.actions?.length ? h('div', { class: 'page-actions' }, options.actions) : null,
    ),
  );
}

export function card(options: { title?: string; description?: Child; actions?: Child[]; class?: string; id?: string }, ...children: Child[]): HTMLElement {
  const titleId = options.title ? uid('card') : undefined;
  return h(
    'section',
    { class: ['card', options.class], 'aria-labelledby': titleId, id: options.id },
    options.title || options.actions
      ? h(
          'div',
          { class: 'card-header' },
          h('div', null, options.title ? h('h2', { id: titleId }, options.title) : null, options.description ? h('p', { class: 'card-description' }, options.description) : null),
          options.actions?.length ? h('div', { class: 'card-actions' }, options.actions) : null,
        )
      : null,
    children,
  );
}

export function emptyState(options: { icon: IconName; title: string; message: Child; action?: Child }): HTMLElement {
  return h(
    'div',
    { class: 'empty' },
    h('div', { class: 'empty-icon' }, icon(options.icon, 22)),
    h('h3', null, options.title),
    h('p', null, options.message),
    options.action ?? null,
  );
}

export function alertBox(error: HumanError | { title: string; message: Child }, tone: 'error' | 'warning' | 'info' | 'success' = 'error', action?: Child): HTMLElement {
  return h(
    'div',
    { class: ['alert', `alert-${tone}`], role: tone === 'error' ? 'alert' : 'status' },
    h('span', { class: 'alert-icon' }, icon(tone === 'success' ? 'check' : tone === 'info' ? 'info' : 'alert', 18)),
    h('div', { class: 'alert-body' }, h('strong', null, error.title), h('p', null, error.message), action ?? null),
  );
}

export function spinner(label = 'Loading'): HTMLElement {
  return h('div', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), h('span', null, `${label}…`));
}

/** Grey placeholder lines while a card loads. */
export function skeleton(lines = 3): HTMLElement {
  return h(
    'div',
    { class: 'skeleton', 'aria-hidden': 'true' },
    Array.from({ length: lines }, (_, index) => h('div', { class: 'skeleton-line', style: { width: `${90 - index * 17}%` } })),
  );
}

/** Label/value rows. */
export function descriptionList(rows: [string, Child][]): HTMLElement {
  return h(
    'dl',
    { class: 'dlist' },
    rows.map(([term, value]) => h('div', { class: 'dlist-row' }, h('dt', null, term), h('dd', null, value))),
  );
}

export interface Column<T> {
  label: string;
  cell: (row: T) => Child;
  class?: string;
}

/** A table that stacks into labelled cards on narrow screens (each cell carries its column name). */
export function table<T>(columns: Column<T>[], rows: T[], options: { caption?: string; rowAttrs?: (row: T) => Props } = {}): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table' },
      options.caption ? h('caption', { class: 'visually-hidden' }, options.caption) : null,
      h('thead', null, h('tr', null, columns.map((column) => h('th', { scope: 'col', class: column.class }, column.label)))),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            options.rowAttrs?.(row) ?? null,
            columns.map((column) => h('td', { class: column.class, dataset: { label: column.label } }, column.cell(row))),
          ),
        ),
      ),
    ),
  );
}

/** Monospace text, e.g. ids and prefixes. */
export function code(text: string): HTMLElement {
  return h('code', { class: 'mono' }, text);
}

/**
 * An email address that wraps only before its `@`, never inside a part; a part too long for its
 * column ends in an ellipsis (the whole address is the title).
 */
export function emailText(email: string, className?: string): HTMLElement {
  const at = email.lastIndexOf('@');
  const parts = at > 0 ? [email.slice(0, at), email.slice(at)] : [email];
  return h('span', { class: ['email', className], title: email }, parts.map((part) => h('span', { class: 'email-part' }, part)));
}

/**
 * A URL shown whole, scheme included (http and https must be told apart), that wraps only before
 * a `/`, `?` or `&`, never inside a word; plain `http:` carries a warning badge.
 */
export function urlText(url: string): HTMLElement {
  const pieces = url.split(/(?=[/?&])(?<!\/)(?<!:)/);
  return h(
    'span',
    { class: 'url-text' },
    url.startsWith('http:') ? badge('HTTP', 'amber', { title: 'Not encrypted: allowed only for local receivers (WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true)' }) : null,
    h('span', { class: 'url-pieces' }, pieces.map((piece, index) => [index > 0 ? h('wbr') : null, piece])),
  );
}
