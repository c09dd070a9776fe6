import pino from 'pino';
import type { Logger as TypeOrmLogger } from 'typeorm';

/**
 * TypeORM's own logging, as structured JSON lines: a failed statement is reported with its
 * SQLSTATE and the first words of our SQL text, never with its parameters (whatever a caller typed)
 * nor the server's message, which can quote them. The caller that gets the error decides how loud
 * it is; this line is the database's side of it.
 */
export class StructuredTypeOrmLogger implements TypeOrmLogger {
  private readonly out: pino.Logger;

  constructor(destination?: pino.DestinationStream) {
    const options: pino.LoggerOptions = {
      level: process.env.LOG_LEVEL ?? 'info',
      base: { service: 'database' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    };
    this.out = destination ? pino(options, destination) : pino(options);
  }

  logQuery(): void {}

  logQueryError(error: string | Error, query: string, _parameters?: unknown[]): void {
    const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
    this.out.warn({ code: typeof code === 'string' ? code : undefined, statement: statementHead(query) }, 'query failed');
  }

  logQuerySlow(time: number, query: string): void {
    this.out.warn({ ms: time, statement: statementHead(query) }, 'slow query');
  }

  logSchemaBuild(): void {}

  logMigration(message: string): void {
    this.out.info(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.out.warn(String(message));
  }
}

/** The statement's first 80 characters, whitespace folded: enough to tell which one failed. */
export function statementHead(query: string): string {
  return query.replace(/\s+/g, ' ').trim().slice(0, 80);
}
