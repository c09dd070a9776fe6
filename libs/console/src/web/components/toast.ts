import { h } from '../lib/dom';
import { icon } from './icons';

type Kind = 'success' | 'error' | 'info';

let polite: HTMLElement | null = null;
let assertive: HTMLElement | null = null;

/** The two live regions toasts are announced in (errors interrupt, the rest waits its turn). */
export function mountToasts(parent: HTMLElement): void {
  const stack = h('div', { class: 'toasts' });
  polite = h('div', { class: 'toast-region', role: 'status', 'aria-live': 'polite' });
  assertive = h('div', { class: 'toast-region', role: 'alert', 'aria-live': 'assertive' });
  stack.append(assertive, polite);
  parent.append(stack);
}

export function toast(message: string, kind: Kind = 'success', title?: string): void {
  const region = kind === 'error' ? assertive : polite;
  if (!region) return;
  const close = () => {
    item.classList.add('leaving');
    setTimeout(() => item.remove(), 200);
  };
  const item = h(
    'div',
    { class: ['toast', `toast-${kind}`], dataset: { kind } },
    h('span', { class: 'toast-icon' }, icon(kind === 'success' ? 'check' : kind === 'error' ? 'alert' : 'info', 16)),
    h('div', { class: 'toast-text' }, title ? h('strong', null, title) : null, h('span', null, message)),
    h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss notification', onclick: close }, icon('close', 14)),
  );
  region.append(item);
  setTimeout(close, kind === 'error' ? 8000 : 5000);
}
