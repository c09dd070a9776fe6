import { api, ApiError, setCsrfToken } from './api';
import type { Account, SessionBody } from './types';

type Listener = (account: Account | null) => void;

let current: Account | null = null;
let emailVia: SessionBody['verification_email_via'] = 'email';
let loaded = false;
const listeners = new Set<Listener>();

/** The signed-in account (null when signed out), with change notifications for the shell. */
export const session = {
  get account(): Account | null {
    return current;
  },

  /** How the server delivers verification links: `email`, or `log` (no mail server: the link is in its log). */
  get verificationEmailVia(): SessionBody['verification_email_via'] {
    return emailVia;
  },

  /** Asks the server once per page load whether the cookie is a live session. */
  async load(): Promise<Account | null> {
    if (loaded) return current;
    try {
      this.set(await api.session());
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      this.clear();
    }
    loaded = true;
    return current;
  },

  set(body: SessionBody): void {
    loaded = true;
    setCsrfToken(body.csrf_token);
    emailVia = body.verification_email_via;
    this.update(body.account);
  },

  /** A fresher copy of the account (after verification, or from the overview). */
  update(account: Account): void {
    current = account;
    listeners.forEach((listener) => listener(current));
  },

  clear(): void {
    loaded = true;
    current = null;
    setCsrfToken(null);
    listeners.forEach((listener) => listener(null));
  },

  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
