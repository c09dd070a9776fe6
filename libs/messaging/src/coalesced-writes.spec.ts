import { once } from 'node:events';
import { AddressInfo, createServer, Server, Socket } from 'node:net';
import { coalesceWrites } from './coalesced-writes';

/** Writes of one event-loop turn leave as one writev; every byte arrives, in order. */
describe('coalesceWrites', () => {
  let server: Server;
  let received: Buffer[];
  let socket: Socket;

  beforeEach(async () => {
    received = [];
    server = createServer((peer) => peer.on('data', (chunk: Buffer) => received.push(chunk)));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    socket = new Socket();
    socket.connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
  });

  afterEach(async () => {
    socket.destroy();
    server.close();
    await once(server, 'close');
  });

  /** Counts the socket's system-call-level writes: `_write` (one chunk) and `_writev` (several). */
  function countWrites(target: Socket): { single: number; vectored: number[] } {
    const counts = { single: 0, vectored: [] as number[] };
    const internals = target as unknown as { _write: (...a: unknown[]) => void; _writev: (chunks: unknown[], cb: unknown) => void };
    const write = internals._write.bind(target);
    const writev = internals._writev.bind(target);
    internals._write = (...args: unknown[]) => {
      counts.single += 1;
      write(...args);
    };
    internals._writev = (chunks: unknown[], cb: unknown) => {
      counts.vectored.push(chunks.length);
      writev(chunks, cb);
    };
    return counts;
  }

  const arrived = async (bytes: number) => {
    for (let i = 0; i < 200 && Buffer.concat(received).length < bytes; i += 1) await new Promise((r) => setTimeout(r, 5));
    return Buffer.concat(received).toString();
  };

  it('sends the writes of one turn in one writev', async () => {
    coalesceWrites(socket);
    const counts = countWrites(socket);
    socket.write('frame-1;');
    socket.write(Buffer.from('frame-2;'));
    socket.write('frame-3;');
    expect(await arrived(24)).toBe('frame-1;frame-2;frame-3;');
    expect(counts).toEqual({ single: 0, vectored: [3] });
  });

  it('sends each turn’s writes as they come, and applies itself once', async () => {
    coalesceWrites(socket);
    coalesceWrites(socket);
    const counts = countWrites(socket);
    socket.write('a;');
    await new Promise((resolve) => setImmediate(resolve));
    socket.write('b;');
    socket.write('c;');
    await new Promise((resolve) => setImmediate(resolve));
    socket.write('d;');
    expect(await arrived(8)).toBe('a;b;c;d;');
    expect(counts).toEqual({ single: 2, vectored: [2] });
  });

  it('is what makes the difference: without it, each write is its own', async () => {
    const counts = countWrites(socket);
    socket.write('x;');
    socket.write('y;');
    socket.write('z;');
    expect(await arrived(6)).toBe('x;y;z;');
    // The first goes at once; the rest queue behind it (libuv) and leave together.
    expect(counts.single).toBeGreaterThanOrEqual(1);
    expect(counts.vectored.length + counts.single).toBeGreaterThanOrEqual(2);
  });
});
