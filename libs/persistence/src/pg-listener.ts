import { Client } from 'pg';
import { errorMessage } from '@cars/contracts';

export interface PgListenerOptions {
  url: string;
  channels: readonly string[];
  applicationName: string;
  /** A notification: its channel and payload. */
  onNotification(channel: string, payload: string): void;
  /**
   * The connection is (re)established and listening. Notifications sent while it was down are
   * lost, so a listener that caches should forget everything here.
   */
  onListening?(): void;
  onError?(message: string): void;
  /** Delay before reconnecting after a loss (ms). */
  reconnectDelayMs?: number;
}

/**
 * One dedicated connection that LISTENs on some channels and comes back after a loss. PostgreSQL
 * is the broadcast medium: a notification is sent at commit, to every listener of every process.
 *
 * Every client it makes has its 'error' listener before it connects, for its whole life (pg
 * emits 'error' on a client without one as an unhandled event: the process would end). After
 * `stop()` it never connects again, and `stop()` resolves once no connection of its own is left,
 * including one that was still being made.
 */
export class PgListener {
  private client?: Client;
  private stopped = false;
  private retry?: NodeJS.Timeout;
  /** The attempt in progress, awaited by `stop()`. */
  private connecting?: Promise<void>;

  constructor(private readonly options: PgListenerOptions) {}

  /** Connects and listens; a first failure is reported and retried like a later loss. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.attempt();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.retry = undefined;
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  get listening(): boolean {
    return this.client !== undefined;
  }

  private attempt(): Promise<void> {
    const attempt = this.connect()
      .catch((error: unknown) => this.lost(error))
      .finally(() => {
        if (this.connecting === attempt) this.connecting = undefined;
      });
    this.connecting = attempt;
    return attempt;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.options.url, application_name: this.options.applicationName });
    // Before connect(): an error while connecting, listening or idle always has a listener.
    client.on('error', (error) => {
      if (this.client === client) this.lost(error);
    });
    client.on('end', () => {
      if (this.client === client) this.lost(new Error('connection ended'));
    });
    client.on('notification', (message) => {
      if (this.client !== client) return;
      try {
        this.options.onNotification(message.channel, message.payload ?? '');
      } catch (error) {
        this.options.onError?.(`a notification on ${message.channel} failed: ${errorMessage(error)}`);
      }
    });
    try {
      if (this.stopped) return;
      await client.connect();
      for (const channel of this.options.channels) {
        if (this.stopped) break;
        await client.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.options.onListening?.();
  }

  private lost(error: unknown): void {
    const client = this.client;
    this.client = undefined;
    client?.end().catch(() => undefined);
    if (this.stopped) return;
    this.options.onError?.(`LISTEN connection lost (${errorMessage(error)}); reconnecting`);
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.stopped) void this.attempt();
    }, this.options.reconnectDelayMs ?? 1000);
    this.retry.unref?.();
  }
}
