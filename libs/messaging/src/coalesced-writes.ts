import type { Socket } from 'node:net';
import type { AmqpConnectionManager } from 'amqp-connection-manager';

const COALESCED = Symbol('cars.coalescedWrites');

/**
 * Writes to `socket` within one turn of the event loop leave in one system call: the first write
 * of a turn corks the socket and the turn's end (process.nextTick) uncorks it, so the frames
 * amqplib writes one `write` each — a burst of replies and their acks, requests published
 * together — go out as one `writev`, and the broker reads them as one segment. On loopback and
 * under load each write is a system call and a TCP segment the broker's side processes: measured
 * in tools/bench/rpc (docs/performance.md).
 */
export function coalesceWrites(socket: Socket): void {
  const marked = socket as Socket & { [COALESCED]?: true };
  if (marked[COALESCED]) return;
  marked[COALESCED] = true;
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function (this: Socket, ...args: unknown[]): boolean {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as Socket['write'];
}

/** Coalesces the writes of every connection `manager` makes (see coalesceWrites). */
export function coalesceConnectionWrites(manager: AmqpConnectionManager): AmqpConnectionManager {
  manager.on('connect', ({ connection }) => {
    const socket = (connection as unknown as { connection?: { stream?: Socket } }).connection?.stream;
    if (socket && typeof socket.cork === 'function') coalesceWrites(socket);
  });
  return manager;
}
