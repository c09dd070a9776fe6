/**
 * The canonical make with this exact name, or else the one that differs only in letter case:
 * one statement for every reader (`/models`, `/stats`, `makes:alias`), so they agree on what a
 * make name means. Rows: `{id, name}`, at most one.
 */
export function findMakeQuery(name: string): { text: string; values: [string] } {
  return {
    text: `SELECT id, name FROM makes WHERE lower(name) = lower($1) ORDER BY (name = $1) DESC LIMIT 1`,
    values: [name],
  };
}
