import { createHmac, timingSafeEqual } from 'node:crypto';
import { CURSOR_PATTERN } from '@cars/contracts';
import { KeysetPosition } from './auction-query';

/**
 * Opaque keyset cursors: `<base64url JSON>.<base64url MAC>`.
 *
 * The payload is the position after the last item of a page (its sort value and id) and how many
 * items came before the next page (for `meta.page`). The MAC covers the payload and the query the
 * cursor was issued for (scope, filters, sort, direction), so an edited cursor, or one replayed
 * against other filters or another order, is rejected with 400 before any SQL runs. The key is
 * built in: cursors are integrity-checked, not secret (they only hold values the caller has seen).
 */
export interface CursorState extends KeysetPosition {
  /** Items before the page the cursor starts. */
  offset: number;
}

export const INVALID_CURSOR =
  'cursor is invalid, or was issued for other filters, sort or direction (use meta.next_cursor of the same query)';

const MAC_KEY = 'cars-query-cursor-v1';
const MAC_LENGTH = 22; // base64url characters: 132 bits

function mac(payload: string, queryKey: string): string {
  return createHmac('sha256', MAC_KEY).update(payload).update('\n').update(queryKey).digest('base64url').slice(0, MAC_LENGTH);
}

export function encodeCursor(state: CursorState, queryKey: string): string {
  const payload = Buffer.from(JSON.stringify({ k: state.key, i: state.id, o: state.offset })).toString('base64url');
  return `${payload}.${mac(payload, queryKey)}`;
}

/** The cursor's position, or null when it is malformed, edited or issued for another query. */
export function decodeCursor(cursor: string, queryKey: string): CursorState | null {
  if (!CURSOR_PATTERN.test(cursor)) return null;
  const [payload, signature] = cursor.split('.');
  const expected = mac(payload, queryKey);
  if (signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) {
    return null;
  }
  try {
    const value: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (typeof value !== 'object' || value === null) return null;
    const { k, i, o } = value as Record<string, unknown>;
    if (!(k === null || typeof k === 'string') || typeof i !== 'string' || !/^\d{1,19}$/.test(i)) return null;
    if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0) return null;
    return { key: k, id: i, offset: o };
  } catch {
    return null;
  }
}
