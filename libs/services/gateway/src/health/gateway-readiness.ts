import { Inject, Injectable } from '@nestjs/common';
import { QUERY_CLIENT, ServiceClient, STATS_CLIENT, WEBHOOKS_CLIENT } from '@cars/messaging';
import { DataSource } from 'typeorm';

export type UpDown = 'up' | 'down';

/** A service behind the gateway: `down` when nobody consumes its RPC queue. */
export interface DownstreamState {
  status: 'up' | 'down' | 'unknown';
  consumers: number | null;
}

/**
 * The gateway's readiness, answered alike on its public port (`GET /health/ready`) and on
 * HEALTH_PORT: the database and the broker connection decide it; the services behind the gateway
 * are shown beside (`detail.services`), never deciding it.
 */
@Injectable()
export class GatewayReadiness {
  constructor(
    private readonly db: DataSource,
    @Inject(QUERY_CLIENT) private readonly query: ServiceClient,
    @Inject(STATS_CLIENT) private readonly stats: ServiceClient,
    @Inject(WEBHOOKS_CLIENT) private readonly webhooks: ServiceClient,
  ) {}

  async checks(): Promise<{ database: UpDown; broker: UpDown }> {
    const database = await this.db.query('SELECT 1').then(
      () => 'up' as const,
      () => 'down' as const,
    );
    return { database, broker: this.query.isConnected() ? 'up' : 'down' };
  }

  async detail(): Promise<{ services: { query: DownstreamState; stats: DownstreamState; webhooks: DownstreamState } }> {
    const [query, stats, webhooks] = await Promise.all([downstream(this.query), downstream(this.stats), downstream(this.webhooks)]);
    return { services: { query, stats, webhooks } };
  }
}

async function downstream(client: ServiceClient): Promise<DownstreamState> {
  const consumers = await client.consumers();
  return { status: consumers === null ? 'unknown' : consumers > 0 ? 'up' : 'down', consumers };
}
