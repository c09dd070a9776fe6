import { Readable } from 'node:stream';
import { readWholeFrames } from './whole-frames';

const FRAME_END = 0xce;

/** An AMQP frame around `payload`: type 3 (body), channel 1, size, payload, frame end. */
function frame(payload: Buffer): Buffer {
  const header = Buffer.alloc(7);
  header.writeUInt8(3, 0);
  header.writeUInt16BE(1, 1);
  header.writeUInt32BE(payload.length, 3);
  return Buffer.concat([header, payload, Buffer.from([FRAME_END])]);
}

/** amqplib's connection as far as frame reading goes; `recvFrame` parses a frame that is whole in `rest`. */
function connection(maxFrameSize = 131_072) {
  const stream = new Readable({ read() {} });
  const conn = {
    rest: Buffer.alloc(0),
    stream,
    maxFrameSize,
    recvSinceLastCheck: false,
    recvFrame(this: { rest: Buffer; maxFrameSize: number }): Buffer | false {
      if (this.rest.length < 7) throw new Error('parsed without a header');
      const size = this.rest.readUInt32BE(3);
      if (size > this.maxFrameSize) throw new Error(`Frame size ${size} exceeds maxFrameSize ${this.maxFrameSize}`);
      if (this.rest.length < size + 8) throw new Error('parsed a partial frame');
      if (this.rest[size + 7] !== FRAME_END) throw new Error('Invalid frame');
      const payload = this.rest.subarray(7, 7 + size);
      this.rest = this.rest.subarray(size + 8);
      return payload;
    },
  };
  readWholeFrames(conn);
  const drain = () => {
    const frames: Buffer[] = [];
    for (let f = conn.recvFrame() as Buffer | false; f; f = conn.recvFrame() as Buffer | false) frames.push(Buffer.from(f));
    return frames;
  };
  return { conn, stream, drain };
}

/** A deterministic sequence in [0, 1). */
function seeded(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('readWholeFrames', () => {
  const payloads = [10, 100_000, 0, 3, 131_072, 50, 70_000].map((size, i) => Buffer.alloc(size, 65 + i));
  const wire = Buffer.concat(payloads.map(frame));

  it.each([1, 7, 8, 1000, 16_384, 65_536, wire.length])('hands amqplib every frame whole, the socket giving chunks of %i bytes', (chunkSize) => {
    const { stream, drain } = connection();
    const received: Buffer[] = [];
    for (let offset = 0; offset < wire.length; offset += chunkSize) {
      stream.push(wire.subarray(offset, offset + chunkSize));
      received.push(...drain());
    }
    expect(received.map((p) => p.length)).toEqual(payloads.map((p) => p.length));
    expect(received.every((p, i) => p.equals(payloads[i]))).toBe(true);
  });

  it('keeps every frame intact over chunks of random sizes', () => {
    for (let seed = 1; seed <= 20; seed += 1) {
      const random = seeded(seed);
      const { stream, drain } = connection();
      const received: Buffer[] = [];
      for (let offset = 0; offset < wire.length; ) {
        const size = 1 + Math.floor(random() * 90_000);
        stream.push(wire.subarray(offset, offset + size));
        offset += size;
        if (random() < 0.7) received.push(...drain());
      }
      received.push(...drain());
      expect(received.every((p, i) => p.equals(payloads[i]))).toBe(true);
      expect(received).toHaveLength(payloads.length);
    }
  });

  it('leaves a chunk of whole frames uncopied, and marks the connection as having received', () => {
    const { conn, stream } = connection();
    const chunk = Buffer.concat([frame(Buffer.from('one')), frame(Buffer.from('two'))]);
    stream.push(chunk);
    const first = conn.recvFrame() as Buffer;
    expect(first.toString()).toBe('one');
    expect(first.buffer).toBe(chunk.buffer);
    expect(conn.recvSinceLastCheck).toBe(true);
  });

  it('lets amqplib refuse a frame larger than its maximum as soon as the header is in', () => {
    const { conn, stream } = connection(4096);
    stream.push(frame(Buffer.alloc(5000)).subarray(0, 100));
    expect(() => conn.recvFrame()).toThrow('exceeds maxFrameSize');
  });
});
