import { authFrame } from '../components/layout';
import { field, FormErrors, input } from '../components/form';
import { alertBox, busy, button, spinner } from '../components/ui';
import { toast } from '../components/toast';
import { api, ApiError } from '../lib/api';
import { h, replace } from '../lib/dom';
import { seconds } from '../lib/messages';
import { href, navigate, PageContext } from '../lib/router';
import { session } from '../lib/session';

const PASSWORD_MIN = 10;
const PASSWORD_MAX = 200;

/** Where to go after signing in: a console path from ?next=, never another site. */
function nextPath(query: URLSearchParams): string {
  const next = query.get('next') ?? '';
  return /^\/console(\/[\w\-/.?=&%]*)?$/.test(next) && !next.startsWith('//') ? next : href('');
}

function authCard(title: string, subtitle: string, ...children: Node[]): HTMLElement {
  return h('section', { class: 'auth-card' }, h('h1', { tabindex: '-1' }, title), h('p', { class: 'auth-subtitle' }, subtitle), children);
}

export function signInPage(context: PageContext): Node {
  const email = field('Email address', input('email', { type: 'email', autocomplete: 'email', required: true }));
  const password = field('Password', input('password', { type: 'password', autocomplete: 'current-password', required: true }));
  const errors = new FormErrors({ email, password });
  const submit = button('Sign in', { type: 'submit', variant: 'primary', attrs: { class: 'btn btn-primary btn-block' } });
  const form = h('form', { class: 'form', novalidate: true }, errors.banner, email.element, password.element, submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.clear();
    if (!email.control.value.trim()) return errors.invalid('email', 'Enter your email address.');
    if (!password.control.value) return errors.invalid('password', 'Enter your password.');
    void busy(submit, async () => {
      try {
        session.set(await api.signIn(email.control.value.trim(), password.control.value));
        navigate(nextPath(context.query), { replace: true });
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) {
          errors.show(error, 'sign in');
          replace(errors.banner, alertBox({ title: 'Incorrect email or password', message: 'Check both and try again, or create an account if you do not have one.' }));
          password.control.value = '';
          password.control.focus();
        } else if (error instanceof ApiError && error.status === 429) {
          errors.clear();
          const wait = error.retryAfter ? ` Try again in ${seconds(error.retryAfter)}.` : ' Try again later.';
          replace(errors.banner, alertBox({ title: 'Too many sign-in attempts', message: `For your security, signing in is paused for a while.${wait}` }));
        } else {
          errors.show(error, 'sign in');
        }
      }
    });
  });
  const notice = context.query.get('reason') === 'expired' ? alertBox({ title: 'Your session has ended', message: 'Sign in again to continue.' }, 'info') : null;
  return authFrame(
    authCard(
      'Sign in',
      'Welcome back. Sign in to manage your API keys, webhooks and usage.',
      ...(notice ? [notice] : []),
      form,
      h('p', { class: 'auth-switch' }, 'New here? ', h('a', { href: href('signup') }, 'Create an account')),
    ),
  );
}

export function signUpPage(): Node {
  const email = field('Email address', input('email', { type: 'email', autocomplete: 'email', required: true }));
  const password = field('Password', input('password', { type: 'password', autocomplete: 'new-password', required: true, minlength: String(PASSWORD_MIN), maxlength: String(PASSWORD_MAX) }), {
    hint: `At least ${PASSWORD_MIN} characters. A passphrase of a few words works well.`,
  });
  const errors = new FormErrors({ email, password });
  const submit = button('Create account', { type: 'submit', variant: 'primary', attrs: { class: 'btn btn-primary btn-block' } });
  const form = h('form', { class: 'form', novalidate: true }, errors.banner, email.element, password.element, submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.clear();
    const address = email.control.value.trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) return errors.invalid('email', 'Enter an email address like name@example.com.');
    const length = password.control.value.length;
    if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
      return errors.invalid('password', `Use ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`);
    }
    void busy(submit, async () => {
      try {
        const created = await api.signUp(address, password.control.value);
        session.set(created);
        navigate(href(''), { replace: true });
        // The overview's banner says where the link went; a toast over the first steps would only hide them.
        if (created.verification_email === 'failed') toast('The verification email could not be sent. Use “Resend the link” in a moment.', 'error', 'Email not sent');
      } catch (error) {
        if (error instanceof ApiError && error.status === 409) {
          errors.clear();
          replace(
            errors.banner,
            alertBox({ title: 'That email address already has an account', message: h('span', null, 'Sign in instead, or use another address. ', h('a', { href: href('signin') }, 'Go to sign in')) }),
          );
        } else {
          errors.show(error, 'create the account');
        }
      }
    });
  });
  return authFrame(
    authCard(
      'Create your account',
      'Start on the Free plan: 100 requests a month, no card needed. Upgrade any time for pricing statistics and webhooks.',
      form,
      h('p', { class: 'auth-switch' }, 'Already have an account? ', h('a', { href: href('signin') }, 'Sign in')),
    ),
  );
}

/** The three refusals of a verification token (unknown, used, expired) in words. */
function verificationFailure(error: unknown, next: string): { title: string; message: string } {
  if (!(error instanceof ApiError) || error.status >= 500 || error.offline) {
    return { title: 'The link could not be checked', message: 'Something went wrong on our side. Open the link again in a moment.' };
  }
  if (/expired/i.test(error.message)) {
    return { title: 'This verification link has expired', message: `Verification links work once, for 24 hours. ${next}` };
  }
  if (/used/i.test(error.message)) {
    return { title: 'This link was already used', message: `Each link works once: the address may already be verified. ${next}` };
  }
  return { title: 'This verification link is not valid', message: `Open the link exactly as it was sent, the whole of it. ${next}` };
}

/** Consumes ?token= from the emailed link, then drops it from the address bar and history. */
export function verifyPage(context: PageContext): Node {
  const token = context.query.get('token') ?? '';
  history.replaceState(null, '', href('verify'));
  const body = h('div', { class: 'verify-body' }, spinner('Verifying your email address'));
  const card = authCard('Email verification', 'Confirming that this address is yours.', body);
  const signedIn = session.account !== null;
  const continueLink = h('a', { class: 'btn btn-primary btn-block', href: href(signedIn ? '' : 'signin') }, signedIn ? 'Go to the overview' : 'Sign in');
  if (!token) {
    replace(body, alertBox({ title: 'This link is incomplete', message: 'Open the link from the email exactly as it was sent, or request a new one from the Overview page.' }), continueLink);
    return authFrame(card);
  }
  void (async () => {
    try {
      const result = await api.verifyEmail(token);
      if (context.signal.aborted) return;
      if (session.account) session.update(result.account);
      replace(
        body,
        h('div', { class: 'verify-success', dataset: { state: 'verified' } }, alertBox({ title: 'Email address verified', message: `${result.account.email} is confirmed. Paid plans can now use webhooks.` }, 'success')),
        continueLink,
      );
    } catch (error) {
      if (context.signal.aborted) return;
      const next = signedIn ? 'Send a fresh link from the Overview page.' : 'Sign in, then send a fresh link from the Overview page.';
      replace(body, h('div', { dataset: { state: 'failed' } }, alertBox(verificationFailure(error, next))), continueLink);
    }
  })();
  return authFrame(card);
}
