import { isAscii } from 'node:buffer';

/** Bytes decoded per step: long enough that the steps cost little, short enough that a non-ASCII one is cheap. */
const BLOCK = 4096;

/**
 * The text of UTF-8 `bytes`, as `bytes.toString()` gives it, decoded faster when the text is
 * mostly ASCII with a few other characters — a page of auctions, where one accented letter in
 * 100 KB made V8 decode all of it on its slow path (~15× the ASCII cost; docs/performance.md).
 * ASCII stretches are copied as Latin-1 (the same characters); only the blocks holding other
 * characters are decoded as UTF-8, cut where no character is split.
 */
export function utf8Text(bytes: Buffer): string {
  if (isAscii(bytes)) return bytes.toString('latin1');
  const end = bytes.length;
  let text = '';
  let start = 0;
  while (start < end) {
    let stop = Math.min(start + BLOCK, end);
    // Never inside a character: move past its continuation bytes (10xxxxxx).
    while (stop < end && (bytes[stop] & 0xc0) === 0x80) stop += 1;
    const block = bytes.subarray(start, stop);
    text += isAscii(block) ? bytes.toString('latin1', start, stop) : bytes.toString('utf8', start, stop);
    start = stop;
  }
  return text;
}
