/**
 * Streams observations to an NDJSON file with backpressure, atomically: the data go to FILE.tmp,
 * which is renamed to FILE only once complete (a failed run leaves no partial FILE behind).
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { Observation } from './observation';

const CHUNK_CHARS = 1 << 20;

export interface WriteResult {
  count: number;
  bytes: number;
}

/** Writes one JSON line per observation to `out`, waiting for 'drain' whenever the buffer is full. */
export async function writeLines(
  out: Writable,
  observations: Iterable<Observation>,
  onProgress?: (count: number) => void,
): Promise<WriteResult> {
  let count = 0;
  let bytes = 0;
  let chunk: string[] = [];
  let chunkChars = 0;
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    const text = chunk.join('');
    chunk = [];
    chunkChars = 0;
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  for (const observation of observations) {
    const line = `${JSON.stringify(observation)}\n`;
    chunk.push(line);
    chunkChars += line.length;
    count++;
    if (chunkChars >= CHUNK_CHARS) {
      await flush();
      onProgress?.(count);
    }
  }
  await flush();
  onProgress?.(count);
  return { count, bytes };
}

/** Writes the observations to `file` atomically (via `file.tmp` and a rename). */
export async function writeNdjsonFile(
  file: string,
  observations: Iterable<Observation>,
  onProgress?: (count: number) => void,
): Promise<WriteResult> {
  const tmp = `${file}.tmp`;
  const stream = createWriteStream(tmp, { highWaterMark: 4 << 20 });
  const failed = new Promise<never>((_, reject) => stream.once('error', reject));
  failed.catch(() => undefined);
  try {
    const result = await Promise.race([writeLines(stream, observations, onProgress), failed]);
    stream.end();
    await Promise.race([once(stream, 'close'), failed]);
    await rename(tmp, file);
    return result;
  } catch (error) {
    // The stream opens its file asynchronously: wait for it to close before removing the file,
    // or the open could land after the removal and leave FILE.tmp behind.
    if (!stream.closed) {
      const closed = once(stream, 'close').catch(() => undefined);
      stream.destroy();
      await closed;
    }
    await rm(tmp, { force: true });
    throw error;
  }
}
