import { isDataError, pgPoolOf } from '@cars/persistence';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';

/**
 * Errors an observation can cause by itself (data errors, and the JavaScript errors a value the
 * code did not foresee may raise): isolating the observation and rejecting it is the cure.
 * Anything else (connection lost, server shutting down) is transient: retry the whole batch.
 */
export function isObservationError(error: unknown): boolean {
  return isDataError(error) || error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError;
}

/** The pool itself, or the pool of a DataSource (what tools and tests hand to the services). */
export function poolOf(database: Pool | DataSource): Pool {
  return database instanceof Pool ? database : pgPoolOf(database);
}
