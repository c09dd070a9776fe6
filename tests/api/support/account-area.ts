import { LoggerService, Module, Type } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { MessagingModule } from '@cars/messaging';
import { DatabaseModule } from '@cars/persistence';
import { AccountAreaConfig, AccountAreaConfigModule, ApiAccessConfig, ApiAccessConfigModule, createGatewayApp, GatewayModule } from '@cars/service-gateway';
import { JsonResponse } from './http';
import { OpenApiConformance } from './openapi-schema';

export { OpenApiConformance };

/** Cheap scrypt for specs that sign up many accounts (the stored format and the checks are the same). */
export const FAST_PASSWORD_HASH = { N: 2 ** 10, r: 8, p: 1 };

/** The account area's settings of most specs: generous sign-in limits, cheap hashes. */
export function accountAreaSettings(overrides: Partial<AccountAreaConfig> = {}): Partial<AccountAreaConfig> {
  return { signInPerAddressPerMinute: 10_000, signInPerEmailPerMinute: 10_000, passwordHash: FAST_PASSWORD_HASH, ...overrides };
}

/** The account area's settings as a module for `startTestStack({ gatewayImports: [...] })`. */
export function accountAreaModule(overrides: Partial<AccountAreaConfig> = {}): Type<unknown> {
  @Module({ imports: [AccountAreaConfigModule.forRoot(accountAreaSettings(overrides))] })
  class AccountAreaSettings {}
  return AccountAreaSettings;
}

/**
 * A gateway like `startTestGateway`'s, with the account area's settings in code, optionally
 * trusting X-Forwarded-For/-Proto/-Host from some peers (e.g. `['127.0.0.1/32']`: the spec itself)
 * and with a logger of the spec's.
 */
export async function startAccountGateway(
  options: { area?: Partial<AccountAreaConfig>; access?: Partial<ApiAccessConfig>; trustedProxies?: string[]; logger?: LoggerService } = {},
): Promise<{ url: string; gateway: NestFastifyApplication }> {
  const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
  @Module({
    imports: [
      DatabaseModule.forRoot({ url: process.env.DATABASE_URL!, poolSize: 4 }),
      MessagingModule.forRoot({ transport: 'rmq', url: process.env.RABBITMQ_URL!, rpcTimeoutMs: 4000 }),
      GatewayModule,
      AccountAreaConfigModule.forRoot(accountAreaSettings(options.area)),
      ApiAccessConfigModule.forRoot({ burstCapacity: 10_000, burstRatePerSecond: 10_000, ...options.access }),
    ],
  })
  class AccountGatewayRoot {}
  const gateway = await createGatewayApp(AccountGatewayRoot, {
    logger: options.logger ?? silent,
    edge: options.trustedProxies ? { trustedProxies: options.trustedProxies } : undefined,
  });
  await gateway.listen(0, '127.0.0.1');
  return { url: (await gateway.getUrl()).replace('[::1]', '127.0.0.1'), gateway };
}

/**
 * A browser-like client of the account area: it keeps the session cookie it is given (and drops
 * it when cleared), sends the CSRF token of its session with changes, and checks every answer
 * against /openapi.json.
 */
export class ConsoleClient {
  cookie: string | undefined;
  csrf: string | undefined;
  /** The raw Set-Cookie of the last answer that set one. */
  lastSetCookie: string | undefined;

  constructor(
    readonly baseUrl: string,
    private readonly conformance: OpenApiConformance,
    readonly headers: Record<string, string> = {},
  ) {}

  async call(method: string, path: string, body?: unknown, extra: { headers?: Record<string, string>; csrf?: boolean; raw?: string } = {}): Promise<JsonResponse> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookie) headers.cookie = `cars_session=${this.cookie}`;
    if (body !== undefined || extra.raw !== undefined) headers['content-type'] = 'application/json';
    if ((extra.csrf ?? true) && this.csrf && method !== 'GET') headers['x-csrf-token'] = this.csrf;
    Object.assign(headers, extra.headers);
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: extra.raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
    const text = await res.text();
    const parsed: JsonResponse = { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    this.conformance.check(method, path, parsed);
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) {
      this.lastSetCookie = setCookie;
      const value = /^cars_session=([^;]*)/.exec(setCookie)?.[1];
      this.cookie = value ? value : undefined;
    }
    if (parsed.body?.csrf_token) this.csrf = parsed.body.csrf_token;
    return parsed;
  }

  get = (path: string, extra?: { headers?: Record<string, string> }) => this.call('GET', path, undefined, extra);
  post = (path: string, body?: unknown, extra?: { headers?: Record<string, string>; csrf?: boolean; raw?: string }) => this.call('POST', path, body, extra);
  patch = (path: string, body: unknown) => this.call('PATCH', path, body);
  delete = (path: string, extra?: { headers?: Record<string, string>; csrf?: boolean }) => this.call('DELETE', path, undefined, extra);

  /** Signs up a new account with this client (its session is then the client's). */
  async signUp(email: string, password = 'correct horse battery staple'): Promise<JsonResponse> {
    return this.post('/account/signup', { email, password });
  }

  /** A second client of the same gateway (another browser). */
  another(headers: Record<string, string> = {}): ConsoleClient {
    return new ConsoleClient(this.baseUrl, this.conformance, headers);
  }
}

export interface CapturedMail {
  from: string;
  to: string[];
  raw: string;
}

/** An SMTP server in this process on a random loopback port that keeps every message (smtp-server). */
export async function startMailCapture(): Promise<{ url: string; mails: CapturedMail[]; close(): Promise<void>; waitFor(to: string, timeoutMs?: number): Promise<CapturedMail> }> {
  const { SMTPServer } = await import('smtp-server');
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    async waitFor(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mail = mails.find((m) => m.to.includes(to));
        if (mail) return mail;
        if (Date.now() > deadline) throw new Error(`no mail to ${to}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** The token of a verification link in a mail or a log line (quoted-printable soft breaks undone). */
export function verificationTokenIn(text: string): string | null {
  const unfolded = text.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  return /\/console\/verify\?token=([A-Za-z0-9_-]{43})/.exec(unfolded)?.[1] ?? null;
}

/** A Nest logger that keeps every line (message and context), for specs that read the log. */
export class CapturingLogger {
  readonly lines: string[] = [];
  private push(level: string, message: unknown, ...rest: unknown[]): void {
    this.lines.push(`${level} ${typeof message === 'string' ? message : JSON.stringify(message)} ${rest.map((r) => String(r)).join(' ')}`);
  }
  log = (message: unknown, ...rest: unknown[]) => this.push('info', message, ...rest);
  error = (message: unknown, ...rest: unknown[]) => this.push('error', message, ...rest);
  warn = (message: unknown, ...rest: unknown[]) => this.push('warn', message, ...rest);
  debug = (message: unknown, ...rest: unknown[]) => this.push('debug', message, ...rest);
  verbose = (message: unknown, ...rest: unknown[]) => this.push('verbose', message, ...rest);
}
