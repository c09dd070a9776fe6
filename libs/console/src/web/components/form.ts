import { ApiError } from '../lib/api';
import { Child, h, replace, uid } from '../lib/dom';
import { humanize, HumanError } from '../lib/messages';
import { alertBox } from './ui';

export type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export interface Field {
  /** The wrapper: label, control, hint and error text. */
  element: HTMLElement;
  control: Control;
  setError(message: string | null): void;
}

/**
 * A labelled control: `<label for>`, the hint and the error wired with aria-describedby, and
 * aria-invalid while an error shows.
 */
export function field(label: string, control: Control, options: { hint?: Child; optional?: boolean; class?: string } = {}): Field {
  control.id ||= uid('f');
  const hintId = options.hint ? uid('hint') : null;
  const errorId = uid('err');
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  control.setAttribute('aria-describedby', [hintId, errorId].filter(Boolean).join(' '));
  const element = h(
    'div',
    { class: ['field', options.class] },
    h('label', { class: 'field-label', htmlFor: control.id }, label, options.optional ? h('span', { class: 'field-optional' }, ' (optional)') : null),
    control,
    options.hint ? h('p', { class: 'field-hint', id: hintId ?? undefined }, options.hint) : null,
    error,
  );
  return {
    element,
    control,
    setError(message) {
      error.textContent = message ?? '';
      error.hidden = message === null;
      if (message === null) control.removeAttribute('aria-invalid');
      else control.setAttribute('aria-invalid', 'true');
    },
  };
}

export function input(name: string, attributes: Record<string, string | boolean | undefined> = {}): HTMLInputElement {
  return h('input', { class: 'input', name, type: 'text', ...attributes });
}

export function select(name: string, options: { value: string; label: string }[], selected = ''): HTMLSelectElement {
  return h(
    'select',
    { class: 'input select', name },
    options.map((option) => h('option', { value: option.value, selected: option.value === selected }, option.label)),
  );
}

/**
 * The form-level half of error display: a banner above the fields, and each field's message from
 * a 400's `details` (keys like `filters.make` are matched by their last part too).
 */
export class FormErrors {
  readonly banner = h('div', { class: 'form-banner' });

  constructor(private readonly fields: Record<string, Field>) {}

  clear(): void {
    replace(this.banner);
    Object.values(this.fields).forEach((f) => f.setError(null));
  }

  show(error: unknown, action: string): HumanError {
    this.clear();
    const human = humanize(error, action);
    let matched = 0;
    if (error instanceof ApiError && error.status === 400) {
      for (const [key, messages] of Object.entries(error.details)) {
        const target = this.fields[key] ?? this.fields[key.split('.').pop() ?? ''];
        if (target) {
          target.setError(messages.join(' '));
          matched += 1;
        }
      }
      const unmatched = Object.entries(error.details).filter(([key]) => !this.fields[key] && !this.fields[key.split('.').pop() ?? '']);
      if (unmatched.length > 0 || matched === 0) {
        const text = unmatched.length > 0 ? unmatched.map(([, m]) => m.join(' ')).join(' ') : error.message;
        replace(this.banner, alertBox({ title: human.title, message: text }));
      }
      const first = Object.values(this.fields).find((f) => f.control.getAttribute('aria-invalid') === 'true');
      first?.control.focus();
      return human;
    }
    replace(this.banner, alertBox(human, human.plan ? 'warning' : 'error'));
    this.banner.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    return human;
  }

  /** A client-side check failed: show it like a server one. */
  invalid(fieldName: string, message: string): void {
    this.fields[fieldName]?.setError(message);
    this.fields[fieldName]?.control.focus();
  }
}
