import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Readable } from 'node:stream';

const WHOLE_FRAMES = Symbol('cars.wholeFrames');

/** Type (1 byte), channel (2), payload size (4); the payload; the frame-end octet. */
const FRAME_HEADER_BYTES = 7;
const FRAME_END_BYTES = 1;

/** The part of amqplib's Connection (lib/connection.js) its frame reading uses. */
interface FrameReading {
  rest: Buffer;
  stream: Readable;
  maxFrameSize: number;
  recvSinceLastCheck: boolean;
  recvFrame(): unknown;
  [WHOLE_FRAMES]?: true;
}

/**
 * amqplib reads a frame by appending every chunk the socket gives to what it holds
 * (`Buffer.concat([rest, chunk])`) until the frame is whole: a 100 KB reply that arrives in n
 * chunks is copied n times over, growing — and even a chunk holding whole frames is copied once.
 * Here amqplib parses only once a frame is whole in `rest`: a chunk read while nothing is held
 * becomes `rest` as it is, and a frame larger than what has arrived is gathered into one buffer
 * of its size, each chunk copied into it once (measured in tools/bench/query; docs/performance.md).
 */
export function readWholeFrames(connection: FrameReading): void {
  if (connection[WHOLE_FRAMES] || typeof connection.recvFrame !== 'function' || !Buffer.isBuffer(connection.rest)) return;
  connection[WHOLE_FRAMES] = true;
  const parse = connection.recvFrame;
  /** The buffer a large frame is gathered in, and `rest` while that goes on (its filled start). */
  let gathering: Buffer | undefined;
  let gathered: Buffer | undefined;
  connection.recvFrame = function (this: FrameReading): unknown {
    for (;;) {
      const rest = this.rest;
      if (rest.length >= FRAME_HEADER_BYTES) {
        const size = rest.readUInt32BE(3);
        // A whole frame, or one amqplib refuses (larger than its maximum): amqplib parses it.
        if (rest.length >= FRAME_HEADER_BYTES + size + FRAME_END_BYTES || (this.maxFrameSize > 0 && size > this.maxFrameSize)) {
          return parse.call(this);
        }
      }
      const chunk = this.stream.read() as Buffer | null;
      if (chunk === null) return false;
      this.recvSinceLastCheck = true;
      if (rest.length === 0) {
        this.rest = chunk;
        continue;
      }
      const needed = rest.length + chunk.length;
      const frameBytes = rest.length >= FRAME_HEADER_BYTES ? FRAME_HEADER_BYTES + rest.readUInt32BE(3) + FRAME_END_BYTES : 0;
      // Still gathering when `rest` is what this reader left (amqplib replaces it once it parses).
      if (gathering !== undefined && rest === gathered && needed <= gathering.length) {
        chunk.copy(gathering, rest.length);
      } else {
        gathering = Buffer.allocUnsafe(Math.max(needed, frameBytes));
        rest.copy(gathering, 0);
        chunk.copy(gathering, rest.length);
      }
      gathered = gathering.subarray(0, needed);
      this.rest = gathered;
    }
  };
}

/** Reads whole frames on every connection `manager` makes (see readWholeFrames). */
export function readConnectionsWholeFrames(manager: AmqpConnectionManager): AmqpConnectionManager {
  manager.on('connect', ({ connection }) => {
    const amqplibConnection = (connection as unknown as { connection?: FrameReading }).connection;
    if (amqplibConnection) readWholeFrames(amqplibConnection);
  });
  return manager;
}
