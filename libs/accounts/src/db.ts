const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An account or key id as the database stores it (checked before a query, so a bad id is a 400, not a SQL error). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
