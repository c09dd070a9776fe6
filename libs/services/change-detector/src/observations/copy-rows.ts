import { copyIn } from '@cars/persistence';
import type { PoolClient } from 'pg';

/**
 * The pipeline's rows as PostgreSQL COPY text (one line per row, tab-separated, `\N` for null)
 * and the COPY that sends them. PostgreSQL reads COPY text ~2.5× cheaper than the same rows as a
 * JSON array through `json_to_recordset` (whose lexer copies every string character by
 * character): 12 against 30 µs of backend CPU per auction row.
 *
 * Unlike the bulk loader's copy-text, a NUL character is sent as it is: PostgreSQL refuses the
 * row (its text cannot hold NUL; SQLSTATE 22021) as it refuses it in any other statement, so the
 * observation is isolated and rejected, never stored altered.
 */

const SPECIAL = /[\\\n\r\t]/;
const SPECIALS = /[\\\n\r\t]/g;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Text as a COPY field: backslash and the separators escaped. */
const escapeText = (value: string): string => (SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]) : value);

/** An array literal (`{"a","b \\"c\\""}`): every element quoted, `"` and `\` escaped, null as NULL. */
function arrayLiteral(values: readonly unknown[]): string {
  const elements = values.map((v) => (v == null ? 'NULL' : `"${String(v).replace(/[\\"]/g, (c) => `\\${c}`)}"`));
  return `{${elements.join(',')}}`;
}

/** One value as a COPY text field. Objects go as their JSON text (for `json` columns). */
export function copyField(value: unknown): string {
  if (value == null) return '\\N';
  if (typeof value === 'string') return escapeText(value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (Array.isArray(value)) return escapeText(arrayLiteral(value));
  if (value instanceof Date) return value.toISOString();
  return escapeText(JSON.stringify(value));
}

/** The rows' `columns`, in that order, as COPY text. */
export function copyText<R extends object>(rows: readonly R[], columns: readonly (keyof R & string)[]): string {
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < columns.length; i += 1) {
      if (i > 0) text += '\t';
      text += copyField(row[columns[i]]);
    }
    text += '\n';
  }
  return text;
}

/**
 * `COPY table (columns) FROM STDIN` of the rows on the transaction's client, the rows sent with
 * the statement (`copyIn`): one round trip. A refused row fails the COPY with PostgreSQL's error
 * (and the transaction with it).
 */
export async function copyRows<R extends object>(
  client: PoolClient,
  table: string,
  columns: readonly (keyof R & string)[],
  rows: readonly R[],
): Promise<void> {
  await copyIn(client, `COPY ${table} (${columns.join(', ')}) FROM STDIN`, copyText(rows, columns));
}
