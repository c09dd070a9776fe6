import { ArgumentsHost, Catch, DynamicModule, Logger, OnApplicationShutdown, Provider, Type } from '@nestjs/common';
import { BaseRpcExceptionFilter } from '@nestjs/microservices';
import { ErrorNames, errorMessage, rpcError } from '@cars/contracts';
import { gauge } from '@cars/metrics';
import { Pool } from 'pg';
import { Observable, of } from 'rxjs';
import { DataSource } from 'typeorm';
import { connectionUrlOf, PooledClient } from './data-source';
import { sqlState } from './pg';

/**
 * Overrides the statement timeout of a read service's pool in code (tests): provided by the
 * service module's `forRoot`, read by its pool.
 */
export const STATEMENT_TIMEOUT_OVERRIDE = Symbol('STATEMENT_TIMEOUT_OVERRIDE');

/**
 * The pool of a read service (query, stats): the database of the process's DataSource, as many
 * connections as its pool, and a `statement_timeout` set on every connection when it opens (a
 * startup parameter: no statement or round trip per request). PostgreSQL stops any statement of
 * the service that runs longer, whatever its input — what one request may cost is bounded. A pool
 * of its own rather than the DataSource's: the quick start shares that one with writers
 * (ingestion, deliveries) that must not be cut off. Connections open on demand; closed at shutdown.
 */
export class ReadPool implements OnApplicationShutdown {
  readonly pool: Pool;

  /** True when the pool reads from READ_DATABASE_URL (a streaming replica) rather than the process's database. */
  readonly replica: boolean;

  constructor(
    dataSource: DataSource,
    readonly applicationName: string,
    readonly statementTimeoutMs: number,
    readUrl?: string,
  ) {
    const extra = (dataSource.options as { extra?: { max?: number } }).extra;
    const primaryUrl = connectionUrlOf(dataSource);
    this.replica = readUrl !== undefined && readUrl !== primaryUrl;
    const connectionString = this.replica ? readUrl! : primaryUrl;
    readPoolTarget.set({ service: applicationName }, this.replica ? 1 : 0);
    if (this.replica) new Logger('ReadPool').log(`${applicationName} reads from READ_DATABASE_URL (${databaseLabel(connectionString)}); writes and reads that must see them stay on DATABASE_URL`);
    this.pool = new Pool({
      connectionString,
      max: extra?.max ?? 10,
      application_name: applicationName,
      connectionTimeoutMillis: 5000,
      statement_timeout: statementTimeoutMs,
      Client: PooledClient,
    });
    // An idle connection cut by the server (restart) must not crash the process; the next checkout reconnects.
    this.pool.on('error', () => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** A costly statement did not get its turn within the wait (CostlyTurns). */
export class NoTurnError extends Error {
  constructor(waitedMs: number) {
    super(`no turn for a costly statement within ${waitedMs} ms`);
    this.name = 'NoTurnError';
  }
}

/**
 * Statements that test many rows one by one (a keyword of several words: its token lookups only
 * narrow the candidates) take turns in this process: at most `capacity` run at once, the others
 * wait in order, at most `maxWaitMs` (then NoTurnError, a 503). Whoever sends them, they can then
 * keep at most `capacity` cores busy, and every other statement finds the rest.
 */
export class CostlyTurns {
  private running = 0;
  private readonly waiting: { start(): void; timer: NodeJS.Timeout }[] = [];

  constructor(
    readonly capacity: number,
    readonly maxWaitMs: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.turn();
    try {
      return await work();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.start();
    }
  }

  private turn(): Promise<void> {
    if (this.running < this.capacity) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const entry = {
        start: () => {
          clearTimeout(entry.timer);
          this.running += 1;
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(new NoTurnError(this.maxWaitMs));
        }, this.maxWaitMs),
      };
      this.waiting.push(entry);
    });
  }
}

/** PostgreSQL stopped the statement at `statement_timeout` (not a cancel by an operator). */
export function isStatementTimeout(error: unknown): boolean {
  return sqlState(error) === '57014' && /statement timeout/i.test(errorMessage(error));
}

const TOO_LONG =
  'The query took too long and was stopped: narrow it (more selective filters, a longer keyword, a smaller page) ' +
  'or try again shortly';
const NO_TURN =
  'Too many broad keyword searches are running: narrow the keyword (one word, or rarer words) or try again shortly';

/**
 * RPC handlers of a read service: a statement stopped at the statement timeout, or a costly one
 * that got no turn, is answered as a 503 that names the cause (the gateway adds Retry-After), not
 * as a failed request; any other error goes on to Nest's handling. An exception filter rather than
 * an interceptor: a filter runs only for a failed request, while every intercepted request pays
 * Nest's `AsyncResource.bind` twice (about 20 µs each on Node 20).
 */
@Catch()
export class StatementTimeoutReplies extends BaseRpcExceptionFilter {
  override catch(error: unknown, host: ArgumentsHost): Observable<unknown> {
    const message = isStatementTimeout(error) ? TOO_LONG : error instanceof NoTurnError ? NO_TURN : undefined;
    return message ? of(rpcError(503, { error: ErrorNames.ServiceUnavailable, message })) : super.catch(error, host);
  }
}

/**
 * The ReadPool of a read service's module: its statement timeout from the module's `forRoot`
 * override (STATEMENT_TIMEOUT_OVERRIDE), else `statementTimeoutMs()` (the environment).
 */
export function readPoolProvider(applicationName: string, settings: () => ReadPoolSettings): Provider {
  return {
    provide: ReadPool,
    inject: [DataSource, { token: STATEMENT_TIMEOUT_OVERRIDE, optional: true }],
    useFactory: (dataSource: DataSource, override?: number) => {
      const { statementTimeoutMs, readUrl } = settings();
      return new ReadPool(dataSource, applicationName, override ?? statementTimeoutMs, readUrl);
    },
  };
}

/** A read service's pool settings from its environment (ReadServicesEnv). */
export interface ReadPoolSettings {
  statementTimeoutMs: number;
  /** READ_DATABASE_URL: a streaming replica of the process's database; unset, the pool reads from that database. */
  readUrl?: string;
}

/** Which database each read service's pool reads from (1: READ_DATABASE_URL, a replica; 0: DATABASE_URL). */
const readPoolTarget = gauge({
  name: 'cars_read_pool_replica',
  help: 'Whether the read service reads from READ_DATABASE_URL (1) or from DATABASE_URL (0)',
  labelNames: ['service'],
});

/** Host, port and database of a PostgreSQL URL for logs: never the credentials. */
export function databaseLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'an unparsable URL';
  }
}

/** A read service's root module with its statement timeout set in code (tests), for every pool inside it. */
export function withStatementTimeout(module: Type<unknown>, statementTimeoutMs: number): DynamicModule {
  return {
    module,
    global: true,
    providers: [{ provide: STATEMENT_TIMEOUT_OVERRIDE, useValue: statementTimeoutMs }],
    exports: [STATEMENT_TIMEOUT_OVERRIDE],
  };
}
