import { field, FormErrors, input } from '../components/form';
import { signOut } from '../components/layout';
import { toast } from '../components/toast';
import { alertBox, badge, busy, button, card, descriptionList, emptyState, linkButton, pageHeader } from '../components/ui';
import { api, ApiError } from '../lib/api';
import { h, replace } from '../lib/dom';
import { date, planName } from '../lib/format';
import { session } from '../lib/session';

const PASSWORD_MIN = 10;
const PASSWORD_MAX = 200;

export function settingsPage(): Node {
  const account = session.account;
  const current = field('Current password', input('current_password', { type: 'password', autocomplete: 'current-password' }));
  const next = field('New password', input('new_password', { type: 'password', autocomplete: 'new-password', minlength: String(PASSWORD_MIN), maxlength: String(PASSWORD_MAX) }), {
    hint: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`,
  });
  const confirm = field('Confirm new password', input('confirm_password', { type: 'password', autocomplete: 'new-password' }));
  const errors = new FormErrors({ current_password: current, new_password: next, confirm_password: confirm });
  const submit = button('Change password', { type: 'submit', variant: 'primary' });
  const form = h('form', { class: 'form', novalidate: true }, errors.banner, current.element, next.element, confirm.element, h('div', { class: 'form-actions form-actions-start' }, submit));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.clear();
    if (!current.control.value) return errors.invalid('current_password', 'Enter your current password.');
    const length = next.control.value.length;
    if (length < PASSWORD_MIN || length > PASSWORD_MAX) return errors.invalid('new_password', `Use ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`);
    if (next.control.value !== confirm.control.value) return errors.invalid('confirm_password', 'The two new passwords do not match.');
    void busy(submit, async () => {
      try {
        await api.changePassword(current.control.value, next.control.value);
        form.reset();
        toast('Other sessions were signed out.', 'success', 'Password changed');
        // The change may end this session too: find out, and ask to sign in again if it did.
        try {
          session.set(await api.session());
        } catch {
          session.clear();
        }
      } catch (error) {
        if (error instanceof ApiError && (error.status === 401 || error.status === 403) && /password/i.test(error.message)) {
          errors.invalid('current_password', 'That is not your current password.');
        } else {
          errors.show(error, 'change the password');
        }
      }
    });
  });

  const signOutButton = button('Sign out', { icon: 'logout', onclick: () => void busy(signOutButton, signOut) });
  return h(
    'div',
    { class: 'page page-narrow' },
    pageHeader('Settings', { description: 'Your sign-in details.' }),
    account
      ? card(
          { title: 'Account' },
          descriptionList([
            ['Email', h('span', { class: 'strong' }, account.email)],
            ['Email status', account.email_verified ? badge('Verified', 'green', { dot: true }) : badge('Not verified', 'amber', { dot: true })],
            ['Plan', `${planName(account.plan)}${account.plan_expires_at ? ` (until ${date(account.plan_expires_at)})` : ''}`],
            ['Member since', date(account.created_at)],
            ['Account id', h('code', { class: 'mono' }, account.id)],
          ]),
        )
      : null,
    card({ title: 'Change password', description: 'Changing it signs out every other session.' }, form),
    card({ title: 'Sign out', description: 'End this session on this device.' }, h('div', { class: 'card-footer' }, signOutButton)),
  );
}

export function notFoundPage(): Node {
  return h(
    'div',
    { class: 'page' },
    emptyState({ icon: 'alert', title: 'Page not found', message: 'There is nothing at this address.', action: linkButton('Go to the overview', '', { variant: 'primary' }) }),
  );
}

export function fatalError(parent: HTMLElement, error: unknown): void {
  replace(
    parent,
    h(
      'div',
      { class: 'page' },
      alertBox(
        { title: 'The console could not start', message: error instanceof ApiError ? error.message : 'Reload the page to try again.' },
        'error',
        button('Reload', { icon: 'refresh', onclick: () => location.reload() }),
      ),
    ),
  );
}
