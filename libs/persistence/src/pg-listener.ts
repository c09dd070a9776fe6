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
 */
export class PgListener {
  private client?: Client;
  private stopped = false;
  private retry?: NodeJS.Timeout;

  constructor(private readonly options: PgListenerOptions) {}

  /** Connects and listens; a first failure is reported and retried like a later loss. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      this.lost(error);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  get listening(): boolean {
    return this.client !== undefined;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.options.url, application_name: this.options.applicationName });
    client.on('notification', (message) => this.options.onNotification(message.channel, message.payload ?? ''));
    client.on('error', (error) => {
      if (this.client === client) this.lost(error);
    });
    client.on('end', () => {
      if (this.client === client) this.lost(new Error('connection ended'));
    });
    await client.connect();
    try {
      for (const channel of this.options.channels) await client.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
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
      if (this.stopped) return;
      this.connect().catch((next: unknown) => this.lost(next));
    }, this.options.reconnectDelayMs ?? 1000);
    this.retry.unref?.();
  }
}
