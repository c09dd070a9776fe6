/** PostgreSQL COPY text format: one row per line, tab-separated, `\N` for null. */
const escapeText = (value: string) =>
  value.replace(/[\\\n\r\t\0]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : ''));

const arrayLiteral = (values: readonly string[]) =>
  `{${values.map((v) => `"${v.replace(/\0/g, '').replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;

export function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (Array.isArray(value)) return escapeText(arrayLiteral(value as string[]));
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return escapeText(String(value));
}

export function copyLine(values: readonly unknown[]): string {
  return `${values.map(copyValue).join('\t')}\n`;
}
