import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { HttpTimeouts, IsAddressList } from './http-edge';
import { loadEnv } from './env';
import { DEFAULT_HEAP_GROWING_PERCENT } from './heap';

/** An integer environment variable within [min, max] (env values arrive as strings). */
export function IntSetting(min: number, max: number): PropertyDecorator {
  return (target, property) => {
    for (const decorate of [Type(() => Number), IsInt(), Min(min), Max(max)]) decorate(target, property);
  };
}

/** Environment every process reads. Each app validates it at boot (see `.env.example`). */
export class BaseEnv {
  @IsOptional()
  @IsString()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;

  @IsOptional()
  @IsString()
  @Matches(/^amqps?:\/\/[^,\s]+(\s*,\s*amqps?:\/\/[^,\s]+)*$/, {
    message: 'RABBITMQ_URL must be an amqp:// or amqps:// URL, or several comma-separated (the nodes of a cluster)',
  })
  RABBITMQ_URL?: string;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL: string = 'info';

  /** How long the gateway waits for a service before answering 503. */
  @IntSetting(100, 60000)
  RPC_TIMEOUT_MS: number = 4000;

  /** Database connections per process. */
  @IntSetting(1, 100)
  DATABASE_POOL_SIZE: number = 10;

  /** How long a stop on SIGINT/SIGTERM may take before the process exits with one clear line. */
  @IntSetting(100, 600_000)
  SHUTDOWN_DEADLINE_MS: number = 10_000;

  /**
   * How far the JavaScript heap grows past what V8's last full collection kept before the next
   * one, in percent (0 = V8's own choice; see heap.ts). Set at boot.
   */
  @IntSetting(0, 1000)
  HEAP_GROWING_PERCENT: number = DEFAULT_HEAP_GROWING_PERCENT;
}

/** A process of the distributed topology: both URLs are required. */
export class ServiceEnv extends BaseEnv {
  @IsString({ message: 'DATABASE_URL is required' })
  declare DATABASE_URL: string;

  @IsString({ message: 'RABBITMQ_URL is required' })
  declare RABBITMQ_URL: string;

  /**
   * Port of /health/live, /health/ready and /metrics (0 = any free port; for the gateway, which
   * also serves them on PORT, 0 = no second port).
   */
  @IntSetting(0, 65535)
  HEALTH_PORT: number = 0;
}

/**
 * Webhook settings, read by the apps hosting the webhooks service (the webhooks app and the quick
 * start). The quick start fills WEBHOOK_SECRET_KEY from `.data/` when it is unset.
 */
export class WebhooksSettingsEnv {
  /** Master keys for signing secrets at rest: comma-separated base64 of 32 bytes; the first encrypts. */
  @IsOptional()
  @IsString()
  WEBHOOK_SECRET_KEY?: string;

  /** Tests and local receivers only: allow private, loopback and non-https destinations (logged loudly). */
  @IsIn(['true', 'false'])
  WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' | 'false' = 'false';

  /** How often endpoints beyond the allowance of a lapsed plan are paused. */
  @IntSetting(100, 3_600_000)
  WEBHOOK_PLAN_SWEEP_INTERVAL_MS: number = 30_000;
}

/** The webhooks app: a service of the distributed topology that must have the master key. */
export class WebhooksEnv extends ServiceEnv {
  @IsString({
    message:
      'WEBHOOK_SECRET_KEY is required: a comma-separated list of base64 keys of 32 bytes (generate one with ' +
      '`openssl rand -base64 32`); the first encrypts signing secrets, every one decrypts',
  })
  WEBHOOK_SECRET_KEY: string;

  @IsIn(['true', 'false'])
  WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' | 'false' = 'false';

  @IntSetting(100, 3_600_000)
  WEBHOOK_PLAN_SWEEP_INTERVAL_MS: number = 30_000;
}

/** The delivery worker: the master key opens the signing secrets; the schedule can be scaled for tests and drills. */
export class DeliveryEnv extends WebhooksEnv {
  /** Delays after each failed attempt, ms, comma-separated (default 60000,300000,1800000,7200000,28800000). */
  @IsOptional()
  @Matches(/^\d+(,\d+){4}$/, { message: 'DELIVERY_RETRY_DELAYS_MS: five comma-separated delays in ms' })
  DELIVERY_RETRY_DELAYS_MS?: string;

  /** Receiver timeout of one attempt. */
  @IntSetting(100, 60_000)
  DELIVERY_RECEIVER_TIMEOUT_MS: number = 10_000;

  /** How long a claimed attempt is leased before a sweep may recover it (at least timeout × 5 + 5 s: claims run ahead of sending). */
  @IntSetting(1_000, 600_000)
  DELIVERY_LEASE_MS: number = 55_000;

  /** Attempts in flight per worker process, and per endpoint. */
  @IntSetting(1, 1000)
  DELIVERY_CONCURRENCY: number = 64;

  @IntSetting(1, 100)
  DELIVERY_ENDPOINT_CONCURRENCY: number = 10;

  /** Attempts in flight per account (all its endpoints) per worker process. */
  @IntSetting(1, 1000)
  DELIVERY_ACCOUNT_CONCURRENCY: number = 16;

  /** An endpoint's circuit: failed attempts in a row that open it, then its backoff (doubled at each reopening, up to the max). */
  @IntSetting(1, 1000)
  DELIVERY_CIRCUIT_FAILURES: number = 5;

  @IntSetting(10, 3_600_000)
  DELIVERY_CIRCUIT_BACKOFF_MS: number = 30_000;

  @IntSetting(10, 86_400_000)
  DELIVERY_CIRCUIT_MAX_BACKOFF_MS: number = 600_000;

  /** The backstop sweep (fan-out, due deliveries, expired leases, allowance waits). */
  @IntSetting(10, 60_000)
  DELIVERY_SWEEP_INTERVAL_MS: number = 1_000;
}

/**
 * The read services (query and stats), read by their modules wherever they run (their apps, the
 * quick start). Numbers and behaviour: docs/api/query.md ("Bounds on one request").
 */
export class ReadServicesEnv {
  /** How long one statement of the query or stats service may run before PostgreSQL stops it (503). */
  @IntSetting(100, 600_000)
  QUERY_STATEMENT_TIMEOUT_MS: number = 3500;

  /**
   * Where query and stats read: a streaming replica of DATABASE_URL (default: DATABASE_URL itself).
   * Reads that must see the latest write (the gateway's keys and ledger, accounts, webhooks) never
   * use it. What a replica's lag means for answers: docs/operations.md ("Read replica").
   */
  @IsOptional()
  @IsString()
  @Matches(/^postgres(ql)?:\/\//, { message: 'READ_DATABASE_URL must be a postgres:// URL' })
  READ_DATABASE_URL?: string;
}

/** The pool settings of a read service (query, stats), from its environment. */
export function readPoolSettings(): { statementTimeoutMs: number; readUrl?: string } {
  const env = loadEnv(ReadServicesEnv);
  return { statementTimeoutMs: env.QUERY_STATEMENT_TIMEOUT_MS, readUrl: env.READ_DATABASE_URL };
}

export class GatewayEnv extends ServiceEnv {
  @IntSetting(0, 65535)
  PORT: number = 3000;

  @IsOptional()
  @IsString()
  HOST: string = '0.0.0.0';
}

/** The quick start: every service in one process; without URLs it embeds what it needs. */
export class StandaloneEnv extends BaseEnv {
  @IntSetting(0, 65535)
  PORT: number = 3000;

  @IsOptional()
  @IsString()
  HOST: string = '127.0.0.1';

  @IntSetting(1, 65535)
  EMBEDDED_DATABASE_PORT: number = 54329;

  /** The quick start stops a demo load and its embedded database: more time than one app needs. */
  @IntSetting(100, 600_000)
  override SHUTDOWN_DEADLINE_MS: number = 30_000;

  /** Load the demo data set on first start (set to false for an empty instance). */
  @IsOptional()
  @IsIn(['true', 'false'])
  LOAD_DEMO_DATA: string = 'true';
}

/**
 * API keys, burst limit and monthly metering at the gateway (read by the gateway module, so the
 * gateway app and the standalone quick start both validate it at boot). Numbers and behaviour:
 * docs/api/accounts.md.
 */
export class ApiAccessEnv {
  /** Redis shared by every gateway replica for the burst limit. Unset: per-process buckets (quick start). */
  @IsOptional()
  @IsString()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /** Prefix of every Redis key the gateway writes. */
  @IsString()
  @Matches(/^[A-Za-z0-9:_.-]{1,64}$/, { message: 'REDIS_KEY_PREFIX: 1-64 characters of A-Z a-z 0-9 : _ . -' })
  REDIS_KEY_PREFIX: string = 'cars:';

  /** Tokens added to each API key's bucket per second (sustained request rate). */
  @Type(() => Number)
  @IsNumber()
  @Min(0.01)
  @Max(100000)
  BURST_RATE_PER_SECOND: number = 10;

  /** Bucket size: how many requests a key may send at once after being idle. */
  @IntSetting(1, 100000)
  BURST_CAPACITY: number = 20;

  /** How long a gateway trusts what it read about a key; a revoked key stops within this time. */
  @IntSetting(0, 30000)
  API_KEY_CACHE_TTL_MS: number = 10000;

  /** Redis command timeout before the burst limit falls back to the per-process bucket. */
  @IntSetting(5, 5000)
  REDIS_TIMEOUT_MS: number = 100;

  /** Connections of the gateway's ledger pool (reservations and commits, asynchronous commit). */
  @IntSetting(1, 100)
  METERING_POOL_SIZE: number = 8;

  /**
   * The most units a gateway leases from the ledger for one account in one statement, spent in
   * memory (docs/adr/0007-metering-leases.md). 1 = a ledger write per request as before leases.
   */
  @IntSetting(1, 10000)
  METERING_LEASE_MAX_UNITS: number = 64;

  /**
   * How long a lease lives without renewal: units a gateway leased and did not use are back in
   * the allowance at most this long (plus one sweep, a third of it) after the gateway dies.
   */
  @IntSetting(1000, 600000)
  METERING_LEASE_TTL_MS: number = 30000;

  /**
   * A lease unused this long is settled and its unused units given back; near the account's
   * limit, after 250 ms (or this, if shorter). A slow client's lease lives between its requests.
   */
  @IntSetting(10, 600000)
  METERING_LEASE_IDLE_MS: number = 10000;

  /**
   * Requests one account may have in flight at once on a gateway process, on the routes that reach
   * the query or stats service (API keys and console sessions alike); beyond it 429. 0 = no cap.
   */
  @IntSetting(0, 10000)
  GATEWAY_MAX_IN_FLIGHT_PER_ACCOUNT: number = 4;

  /**
   * `false` turns authentication, burst limits and metering off: every route is open and free.
   * For benchmarks only; the gateway logs a loud warning.
   */
  @IsIn(['true', 'false'])
  METERING_ENABLED: 'true' | 'false' = 'true';
}

/**
 * The account area (console) at the gateway: verification mail, sessions and sign-in limits (read
 * by the gateway module, so the gateway app and the quick start both validate it at boot).
 * Numbers and behaviour: docs/api/account-area.md.
 */
export class AccountAreaEnv {
  /**
   * Where links in emails point, e.g. `https://cars.example.com` (no trailing slash). Unset: the
   * origin the request came to (with trust proxy, X-Forwarded-Proto/-Host).
   */
  @IsOptional()
  @IsString()
  @Matches(/^https?:\/\/[^/?#\s]+$/, { message: 'PUBLIC_BASE_URL must be an http(s) origin without a path, e.g. https://cars.example.com' })
  PUBLIC_BASE_URL?: string;

  /** SMTP server for verification mail, e.g. `smtp://user:pass@mail.example.com:587` or `smtps://…`. Unset: the link is logged. */
  @IsOptional()
  @IsString()
  @Matches(/^smtps?:\/\/\S+$/, { message: 'SMTP_URL must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string;

  /** Sender of verification mail, e.g. `Classic Car Auction Data <no-reply@cars.example.com>`. */
  @IsString()
  MAIL_FROM: string = 'Classic Car Auction Data <no-reply@localhost>';

  /** A session ends after this long without a request (ms; default 12 h). */
  @IntSetting(60_000, 30 * 86_400_000)
  SESSION_IDLE_TIMEOUT_MS: number = 12 * 3_600_000;

  /** A session ends this long after sign-in whatever happens (ms; default 7 days). */
  @IntSetting(60_000, 90 * 86_400_000)
  SESSION_MAX_AGE_MS: number = 7 * 86_400_000;

  /** Verification links are valid this long (ms; default 24 h). */
  @IntSetting(60_000, 30 * 86_400_000)
  EMAIL_VERIFICATION_TTL_MS: number = 86_400_000;

  /** Sign-in attempts per minute per email address. */
  @IntSetting(1, 10_000)
  SIGNIN_ATTEMPTS_PER_EMAIL_PER_MINUTE: number = 5;

  /** Sign-in and sign-up attempts per minute per client address. */
  @IntSetting(1, 100_000)
  SIGNIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE: number = 20;
}

/**
 * Timeouts of every HTTP server of ours: the gateway (and the quick start) and the health ports
 * (docs/operations.md, "The HTTP edge").
 */
export class HttpTimeoutsEnv {
  /** A request's headers must arrive within this (ms); else 408 and the connection is closed. */
  @IntSetting(100, 600_000)
  HTTP_HEADERS_TIMEOUT_MS: number = 10_000;

  /** A whole request (headers and body) must arrive within this (ms); else 408 and the connection is closed. */
  @IntSetting(100, 600_000)
  HTTP_REQUEST_TIMEOUT_MS: number = 30_000;

  /** An idle keep-alive connection is closed after this (ms). */
  @IntSetting(100, 600_000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 5_000;

  /** A connection silent this long (no byte either way, ms) is closed. */
  @IntSetting(100, 3_600_000)
  HTTP_IDLE_TIMEOUT_MS: number = 60_000;
}

export function httpTimeoutsOf(env: HttpTimeoutsEnv): HttpTimeouts {
  return {
    headersMs: env.HTTP_HEADERS_TIMEOUT_MS,
    requestMs: env.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    idleMs: env.HTTP_IDLE_TIMEOUT_MS,
  };
}

/** The gateway's HTTP edge (the gateway app and the quick start read it at boot). */
export class GatewayEdgeEnv extends HttpTimeoutsEnv {
  /**
   * Peers whose X-Forwarded-For/-Proto/-Host are believed: comma-separated addresses and CIDR
   * ranges, e.g. `10.0.0.0/8` for an ingress in the cluster network. Unset: nobody's; the client
   * address is the connection's.
   */
  @IsOptional()
  @IsString()
  @IsAddressList()
  TRUSTED_PROXIES?: string;
}
