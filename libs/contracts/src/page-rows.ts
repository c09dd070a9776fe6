import type { JsonText, PaginationMetaDto } from './dto';

/**
 * The page of a list route (`/auctions`, `/auctions/live`, bids) on the RPC hop between the query
 * service and the gateway, in fewer bytes than its JSON text: the field names of the items are
 * sent once, not in every item. The gateway rebuilds the exact JSON text the query service would
 * have sent (pageJsonOfRows); the client receives the same bytes either way.
 *
 * The text (UTF-8) is three parts separated by a line feed:
 *
 *   <field names, comma-separated>\n<meta JSON>\n<items>
 *
 * `items` are the items' JSON objects as PostgreSQL's `row_to_json` writes them, comma-separated,
 * with every field named PAGE_ROWS_FIELD: `{"~":1,"~":"bringatrailer",…},{"~":2,…}`. The field
 * names replace those marks in order, item after item. The mark `"~":` occurs nowhere else: in
 * JSON text a quote inside a string is escaped, only a name is followed by a colon, and the
 * objects PostgreSQL nests (`json_build_object`) write `"name" : value`.
 */

/** The AMQP `type` of a request whose client reads PAGE_ROWS_REPLY replies (and JSON text ones). */
export const PAGE_ROWS_READER_REQUEST = 'cars.rpc; reads=json-text,page-rows';

/** The AMQP `type` of a reply whose content is a page in the form above. */
export const PAGE_ROWS_REPLY = 'cars.page-rows';

/** The name every field of an item has on the hop (a column alias of the page's statement). */
export const PAGE_ROWS_FIELD = '~';

const FIELD_MARK = `"${PAGE_ROWS_FIELD}":`;

/** A page in the hop's form; `toJSON` is its JSON text, for any path that sends JSON. */
export class PageRows<T = unknown> {
  constructor(readonly text: string) {}

  /** The page's JSON text (JSON.stringify of an envelope holding it writes that text as a string). */
  toJSON(): JsonText<T> {
    return pageJsonOfRows(this.text);
  }
}

/**
 * The page of `items` (JSON objects whose fields are all named PAGE_ROWS_FIELD, fields named by
 * `fieldNames` in their order) and `meta`. `fieldNames` is `names.join(',')` of the projection.
 */
export function pageRows<T>(fieldNames: string, items: readonly string[], meta: PaginationMetaDto): PageRows<{ data: T[]; meta: PaginationMetaDto }> {
  return new PageRows(`${fieldNames}\n${JSON.stringify(meta)}\n${items.join(',')}`);
}

/** `"name":` of every field, per field-name list (a handful per release: one per projection). */
const namesCache = new Map<string, string[]>();

function fieldsOf(fieldNames: string): string[] {
  let names = namesCache.get(fieldNames);
  if (!names) {
    names = fieldNames.split(',').map((name) => `${JSON.stringify(name)}:`);
    if (namesCache.size >= 32) namesCache.clear();
    namesCache.set(fieldNames, names);
  }
  return names;
}

/**
 * The JSON text of a page sent as PageRows text: `{"data":[…items with their names…],"meta":…}`,
 * byte for byte what `pageJson` of the same items and meta writes.
 */
export function pageJsonOfRows<T = unknown>(text: string): JsonText<T> {
  const namesEnd = text.indexOf('\n');
  const metaEnd = text.indexOf('\n', namesEnd + 1);
  if (namesEnd < 0 || metaEnd < 0) throw new Error('A page-rows text without its field names and meta');
  const names = fieldsOf(text.slice(0, namesEnd));
  const meta = text.slice(namesEnd + 1, metaEnd);
  if (metaEnd + 1 === text.length) return `{"data":[],"meta":${meta}}`;
  // Pieces between the marks: `{`, then each value with the `,` or `},{` after it, the last `}`.
  const pieces = text.slice(metaEnd + 1).split(FIELD_MARK);
  const marks = pieces.length - 1;
  const width = names.length;
  if (marks % width !== 0) throw new Error(`A page-rows text with ${marks} fields for items of ${width}`);
  const parts = new Array<string>(2 * pieces.length + 2);
  parts[0] = '{"data":[';
  let p = 1;
  for (let i = 0, field = 0; i < marks; i += 1) {
    parts[p++] = pieces[i];
    parts[p++] = names[field];
    field = field + 1 === width ? 0 : field + 1;
  }
  parts[p++] = pieces[marks];
  parts[p] = `],"meta":${meta}}`;
  return parts.join('');
}
