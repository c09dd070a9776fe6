import { CallHandler, DynamicModule, ExecutionContext, Injectable, NestInterceptor, OnApplicationShutdown, Provider, Type } from '@nestjs/common';
import { ErrorNames, errorMessage, rpcError } from '@cars/contracts';
import { Pool } from 'pg';
import { catchError, Observable, of, throwError } from 'rxjs';
import { DataSource } from 'typeorm';
import { connectionUrlOf } from './data-source';
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

  constructor(
    dataSource: DataSource,
    readonly applicationName: string,
    readonly statementTimeoutMs: number,
  ) {
    const extra = (dataSource.options as { extra?: { max?: number } }).extra;
    this.pool = new Pool({
      connectionString: connectionUrlOf(dataSource),
      max: extra?.max ?? 10,
      application_name: applicationName,
      connectionTimeoutMillis: 5000,
      statement_timeout: statementTimeoutMs,
    });
    // An idle connection cut by the server (restart) must not crash the process; the next checkout reconnects.
    this.pool.on('error', () => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** PostgreSQL stopped the statement at `statement_timeout` (not a cancel by an operator). */
export function isStatementTimeout(error: unknown): boolean {
  return sqlState(error) === '57014' && /statement timeout/i.test(errorMessage(error));
}

/**
 * RPC handlers of a read service: a statement stopped at the statement timeout is answered as a
 * 503 that names the cause (the gateway adds Retry-After), not as a failed request.
 */
@Injectable()
export class StatementTimeoutReplies implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) =>
        isStatementTimeout(error)
          ? of(
              rpcError(503, {
                error: ErrorNames.ServiceUnavailable,
                message:
                  'The query took too long and was stopped: narrow it (more selective filters, a longer keyword, ' +
                  'a smaller page) or try again shortly',
              }),
            )
          : throwError(() => error),
      ),
    );
  }
}

/**
 * The ReadPool of a read service's module: its statement timeout from the module's `forRoot`
 * override (STATEMENT_TIMEOUT_OVERRIDE), else `statementTimeoutMs()` (the environment).
 */
export function readPoolProvider(applicationName: string, statementTimeoutMs: () => number): Provider {
  return {
    provide: ReadPool,
    inject: [DataSource, { token: STATEMENT_TIMEOUT_OVERRIDE, optional: true }],
    useFactory: (dataSource: DataSource, override?: number) =>
      new ReadPool(dataSource, applicationName, override ?? statementTimeoutMs()),
  };
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
