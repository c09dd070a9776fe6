import { EventEmitter } from 'node:events';
import type { Connection, PoolClient, Submittable } from 'pg';

/** What pg's connection offers beyond its published types: the COPY sub-protocol's two frontend messages. */
interface CopyConnection extends Connection {
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/**
 * `COPY … FROM STDIN` with its rows in the same write as the statement: one round trip, where a
 * COPY stream (pg-copy-streams) waits for the server's CopyInResponse before it sends the rows —
 * two. The protocol allows it: a backend whose COPY could not start (a bad table or column)
 * answers with an error and ignores the CopyData and CopyDone that follow, and one that fails on
 * a row reads on to the CopyDone before it answers. For rows already in memory (a batch), not for
 * streaming large loads.
 *
 * A pg submittable, so it takes its turn in the client's queue like any statement; an
 * EventEmitter that emits `finish` (rows taken) or `error`, as a COPY stream does.
 */
class PipelinedCopyIn extends EventEmitter implements Submittable {
  rowCount = 0;
  private settled = false;

  constructor(
    readonly text: string,
    private readonly data: Buffer,
  ) {
    super();
  }

  submit(connection: Connection): void {
    const copy = connection as CopyConnection;
    // One write for the three messages.
    copy.stream.cork();
    copy.query(this.text);
    if (this.data.length > 0) copy.sendCopyFromChunk(this.data);
    copy.endCopyFrom();
    copy.stream.uncork();
  }

  /** pg replaces it with its timeout when `query_timeout` is set; it is called as the query settles. */
  callback(): void {}

  handleCopyInResponse(): void {
    // The rows are on their way already.
  }

  handleCommandComplete(message: { text?: string }): void {
    const count = /^COPY (\d+)/.exec(message.text ?? '');
    if (count) this.rowCount = Number(count[1]);
  }

  handleError(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.callback();
    this.emit('error', error);
  }

  handleReadyForQuery(): void {
    if (this.settled) return;
    this.settled = true;
    this.callback();
    this.emit('finish');
  }
}

/**
 * Sends `text` (COPY text format: one line per row) with `COPY <target> FROM STDIN`, in one round
 * trip, on the client given (a transaction's). Resolves with the rows the server took; rejects
 * with PostgreSQL's error when it refuses the statement or a row.
 */
export function copyIn(client: PoolClient, statement: string, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const copy = new PipelinedCopyIn(statement, Buffer.from(text, 'utf8'));
    copy.once('finish', () => resolve(copy.rowCount));
    copy.once('error', reject);
    client.query(copy);
  });
}
