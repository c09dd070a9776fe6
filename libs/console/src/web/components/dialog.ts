import { append, Child, h, uid } from '../lib/dom';
import { icon } from './icons';
import { toast } from './toast';
import { button } from './ui';

export interface DialogHandle {
  element: HTMLDialogElement;
  close(): void;
}

/**
 * A modal built on the native <dialog>: focus moves in and is trapped, Escape closes, and focus
 * returns to where it was.
 */
export function openDialog(options: {
  title: string;
  body: Child;
  actions?: (close: () => void) => Child[];
  onClose?: () => void;
  wide?: boolean;
  /** Escape and the close button stay off (a secret must be acknowledged). */
  dismissible?: boolean;
}): DialogHandle {
  const titleId = uid('dlg');
  const opener = document.activeElement as HTMLElement | null;
  const dismissible = options.dismissible ?? true;
  const element: HTMLDialogElement = h('dialog', { class: ['dialog', options.wide && 'dialog-wide'], 'aria-labelledby': titleId });
  const close = () => {
    if (element.open) element.close();
  };
  append(element, [
    h(
      'div',
      { class: 'dialog-header' },
      h('h2', { id: titleId }, options.title),
      dismissible ? h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close', onclick: close }, icon('close', 16)) : null,
    ),
    h('div', { class: 'dialog-body' }, options.body),
    options.actions ? h('div', { class: 'dialog-actions' }, options.actions(close)) : null,
  ]);
  element.addEventListener('cancel', (event) => {
    if (!dismissible) event.preventDefault();
  });
  element.addEventListener('close', () => {
    element.remove();
    options.onClose?.();
    opener?.focus?.();
  });
  // A click on the backdrop (outside the box) closes a dismissible dialog.
  element.addEventListener('click', (event) => {
    if (dismissible && event.target === element) close();
  });
  document.body.append(element);
  element.showModal();
  return { element, close };
}

export function confirmDialog(options: { title: string; message: Child; confirm: string; danger?: boolean }): Promise<boolean> {
  return new Promise((resolve) => {
    let confirmed = false;
    openDialog({
      title: options.title,
      body: h('p', { class: 'dialog-text' }, options.message),
      onClose: () => resolve(confirmed),
      actions: (close) => [
        button('Cancel', { onclick: close }),
        button(options.confirm, {
          variant: options.danger ? 'danger' : 'primary',
          onclick: () => {
            confirmed = true;
            close();
          },
          attrs: { autofocus: true },
        }),
      ],
    });
  });
}

/** Copies text, with a toast either way (the clipboard can be refused on plain http). */
export async function copyText(text: string, what = 'Copied to the clipboard'): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    toast(what);
    return true;
  } catch {
    toast('Select the text and copy it with your keyboard instead.', 'info', 'Copying is not available here');
    return false;
  }
}

/** A read-only value with a copy button. */
export function copyField(value: string, label: string): HTMLElement {
  const id = uid('copy');
  const text = h('input', { class: 'input mono secret-value', id, readonly: true, value, spellcheck: 'false', autocomplete: 'off' });
  text.addEventListener('focus', () => text.select());
  const copy = button('Copy', {
    icon: 'copy',
    onclick: () => {
      void copyText(value).then((ok) => {
        if (!ok) text.select();
        else {
          copy.classList.add('copied');
          const label = copy.querySelector('span');
          if (label) label.textContent = 'Copied';
          setTimeout(() => {
            copy.classList.remove('copied');
            if (label) label.textContent = 'Copy';
          }, 2000);
        }
      });
    },
    attrs: { 'aria-label': `Copy ${label}`, dataset: { copy: '' }, autofocus: true },
  });
  return h('div', { class: 'copy-field' }, h('label', { class: 'visually-hidden', htmlFor: id }, label), text, copy);
}

/** Shows a secret once: it cannot be shown again, so the dialog must be acknowledged. */
export function revealSecret(options: { title: string; intro: Child; value: string; label: string }): Promise<void> {
  return new Promise((resolve) => {
    openDialog({
      title: options.title,
      dismissible: false,
      onClose: resolve,
      body: [
        h('p', { class: 'dialog-text' }, options.intro),
        copyField(options.value, options.label),
        h('p', { class: 'secret-warning' }, icon('lock', 14), h('span', null, 'This is the only time it is shown. Store it somewhere safe, such as a secrets manager.')),
      ],
      actions: (close) => [button('I have stored it', { variant: 'primary', onclick: close, attrs: { dataset: { ack: '' } } })],
    });
  });
}
