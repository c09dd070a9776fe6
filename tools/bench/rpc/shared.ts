import { Socket } from 'node:net';

/** Message pattern, queues and socket checks shared by the RPC benchmark's two processes. */
export const ECHO_PATTERN = 'bench.echo';
export const OURS_QUEUE = 'bench.rpc.ours';
export const RAW_QUEUE = 'bench.rpc.raw';

/** A request of the bench: `text` is the payload; with `reply`, the answer is JSON text of that many bytes instead of the echo. */
export interface BenchRequest {
  text: string;
  reply?: number;
}

const replies = new Map<number, string>();

/**
 * The JSON text of `bytes` bytes a server answers a `reply` request with — the shape of a query
 * service answer (a page's JSON text; ≥ 12 bytes).
 */
export function replyText(bytes: number): string {
  let text = replies.get(bytes);
  if (text === undefined) {
    text = `{"data":"${'x'.repeat(Math.max(0, bytes - 11))}"}`;
    replies.set(bytes, text);
  }
  return text;
}

export interface SocketRecord {
  socket: Socket;
  noDelay: boolean;
}

/**
 * Records every TCP connection this process opens from now on and whether Nagle's algorithm was
 * turned off on it (`setNoDelay(true)`, which amqplib calls with the `noDelay` socket option):
 * a connection left with it on shows up as a ~40 ms mode of small request/reply messages
 * (Nagle waiting for the peer's delayed ACK).
 */
export function recordNoDelay(): SocketRecord[] {
  const records: SocketRecord[] = [];
  const connect = Socket.prototype.connect;
  const setNoDelay = Socket.prototype.setNoDelay;
  Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
    if (!records.some((r) => r.socket === this)) records.push({ socket: this, noDelay: false });
    return (connect as (...a: unknown[]) => Socket).apply(this, args);
  } as typeof Socket.prototype.connect;
  Socket.prototype.setNoDelay = function (this: Socket, noDelay?: boolean) {
    const record = records.find((r) => r.socket === this);
    if (record) record.noDelay = noDelay !== false;
    return setNoDelay.call(this, noDelay);
  };
  return records;
}
