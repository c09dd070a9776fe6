import type {
  Account,
  ApiKey,
  CreatedKey,
  Delivery,
  ErrorBody,
  Overview,
  SessionBody,
  SignUpBody,
  VerificationMail,
  Stats,
  Webhook,
  WebhookInput,
} from './types';

/** A refused or failed request: the API's error envelope, plus what the console needs to word it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly details: Record<string, string[]> = {},
    /** Seconds, from Retry-After. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }

  /** The server could not be reached at all. */
  get offline(): boolean {
    return this.status === 0;
  }
}

let csrfToken: string | null = null;
const expiredListeners = new Set<() => void>();

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when an authenticated request answers 401: the session ended (signed out elsewhere, password changed). */
export function onSessionExpired(listener: () => void): void {
  expiredListeners.add(listener);
}

interface RequestOptions {
  /** A 401 here is an answer (wrong password), not an ended session. */
  anonymous?: boolean;
}

async function call<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'Network Error', 'The server could not be reached. Check your connection and try again.');
  }
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!response.ok) {
    const envelope = (parsed ?? {}) as Partial<ErrorBody>;
    const retry = Number(response.headers.get('retry-after'));
    const error = new ApiError(
      response.status,
      envelope.error ?? response.statusText,
      envelope.message ?? 'Something went wrong.',
      envelope.details ?? {},
      Number.isFinite(retry) && retry > 0 ? retry : null,
    );
    if (response.status === 401 && !options.anonymous) expiredListeners.forEach((listener) => listener());
    throw error;
  }
  return parsed as T;
}

const enc = encodeURIComponent;

export const api = {
  // Session
  signUp: (email: string, password: string) => call<SignUpBody>('POST', '/account/signup', { email, password }, { anonymous: true }),
  signIn: (email: string, password: string) => call<SessionBody>('POST', '/account/signin', { email, password }, { anonymous: true }),
  signOut: () => call<void>('POST', '/account/signout', undefined, { anonymous: true }),
  session: () => call<SessionBody>('GET', '/account/session', undefined, { anonymous: true }),
  verifyEmail: (token: string) => call<{ account: Account }>('POST', '/account/verify-email', { token }, { anonymous: true }),
  resendVerification: () => call<VerificationMail>('POST', '/account/verify-email/resend'),
  changePassword: (currentPassword: string, newPassword: string) =>
    call<void>('POST', '/account/password', { current_password: currentPassword, new_password: newPassword }),

  // Overview and keys
  overview: () => call<Overview>('GET', '/account/overview'),
  keys: () => call<{ data: ApiKey[] }>('GET', '/account/keys'),
  createKey: () => call<CreatedKey>('POST', '/account/keys'),
  revokeKey: (id: string) => call<void>('DELETE', `/account/keys/${enc(id)}`),

  // Webhooks (the /webhooks routes, under the session)
  webhooks: () => call<{ data: Webhook[]; meta: { total: number } }>('GET', '/account/webhooks?limit=100'),
  webhook: (id: string) => call<{ data: Webhook }>('GET', `/account/webhooks/${enc(id)}`),
  createWebhook: (input: WebhookInput) => call<{ data: Webhook; secret: string }>('POST', '/account/webhooks', input),
  updateWebhook: (id: string, input: WebhookInput) => call<{ data: Webhook }>('PATCH', `/account/webhooks/${enc(id)}`, input),
  deleteWebhook: (id: string) => call<void>('DELETE', `/account/webhooks/${enc(id)}`),
  testWebhook: (id: string) => call<{ data: Delivery }>('POST', `/account/webhooks/${enc(id)}/test`),
  rotateSecret: (id: string) => call<{ data: { secret: string } }>('POST', `/account/webhooks/${enc(id)}/secret/rotate`),
  deliveries: (id: string) => call<{ data: Delivery[] }>('GET', `/account/webhooks/${enc(id)}/deliveries`),
  retryDelivery: (id: string, deliveryId: string) =>
    call<{ data: Delivery }>('POST', `/account/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}/retry`),
  recover: (id: string, since: string, until?: string) =>
    call<{ data: { recovered: number } }>('POST', `/account/webhooks/${enc(id)}/recover`, until ? { since, until } : { since }),

  // Pickers and the market view
  makes: () => call<{ data: unknown[] }>('GET', '/account/makes').then((r) => names(r.data)),
  models: (make: string) => call<{ data: unknown[] }>('GET', `/account/models?make=${enc(make)}`).then((r) => names(r.data)),
  sources: () => call<{ data: unknown[] }>('GET', '/account/sources').then((r) => options(r.data)),
  stats: (query: { make: string; model?: string; year_min?: number; year_max?: number }) => {
    const params = new URLSearchParams({ make: query.make });
    if (query.model) params.set('model', query.model);
    if (query.year_min !== undefined) params.set('year_min', String(query.year_min));
    if (query.year_max !== undefined) params.set('year_max', String(query.year_max));
    return call<Stats>('GET', `/account/stats?${params.toString()}`);
  },
};

/** Picker lists come as strings, or as objects with a name or an id: take what is there. */
function names(list: unknown[]): string[] {
  return list
    .map((item) => {
      if (typeof item === 'string') return item;
      if (item && typeof item === 'object') {
        const record = item as Record<string, unknown>;
        for (const key of ['id', 'name', 'make', 'model', 'source']) if (typeof record[key] === 'string') return record[key] as string;
      }
      return '';
    })
    .filter((name) => name !== '');
}

/** Sources come as identifiers, or as objects with an identifier and a display name. */
function options(list: unknown[]): { value: string; label: string }[] {
  return list
    .map((item) => {
      if (typeof item === 'string') return { value: item, label: item };
      const record = (item ?? {}) as Record<string, unknown>;
      const value = [record.id, record.source, record.name].find((v): v is string => typeof v === 'string') ?? '';
      const label = [record.name, record.label, record.display_name].find((v): v is string => typeof v === 'string') ?? value;
      return { value, label };
    })
    .filter((option) => option.value !== '');
}
