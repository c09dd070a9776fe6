/**
 * How deep objects and arrays may nest in a request body (the gateway) and in an RPC payload a
 * service takes (plus the few levels of the message around the body). Nothing the API takes nests
 * more than a few levels; deeper input is refused before it is parsed, so no parser, validator or
 * serializer ever recurses through it.
 */
export const MAX_JSON_DEPTH = 32;

/** An RPC message wraps the request body in a few levels of its own (packet, data, body). */
export const MAX_RPC_JSON_DEPTH = MAX_JSON_DEPTH + 8;

/**
 * Whether JSON text nests objects and arrays deeper than `max`: one pass over the text that skips
 * strings, without recursion and without parsing, so a hostile depth costs no more than its
 * length. Takes UTF-8 bytes as well (every structural character is ASCII, and no byte of a
 * multi-byte character is). Text that is not JSON is the parser's to refuse.
 */
export function jsonNestingExceeds(text: string | Uint8Array, max: number = MAX_JSON_DEPTH): boolean {
  const codeAt = typeof text === 'string' ? (i: number) => text.charCodeAt(i) : (i: number) => text[i];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = codeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth -= 1;
    }
  }
  return false;
}
