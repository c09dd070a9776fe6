import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { QUERY_CLIENT, ServiceClient, STATS_CLIENT, WEBHOOKS_CLIENT } from '@cars/messaging';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';

type Downstream = { status: 'up' | 'down' | 'unknown'; consumers: number | null };

/**
 * Liveness and readiness of the gateway itself (its database and broker connection decide
 * readiness), with the services behind it in `detail.services`: how many instances consume each
 * RPC queue. A service with none answers 503 until one is back, but the gateway stays ready — a
 * restart of the gateway would not help.
 */
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    private readonly db: DataSource,
    @Inject(QUERY_CLIENT) private readonly query: ServiceClient,
    @Inject(STATS_CLIENT) private readonly stats: ServiceClient,
    @Inject(WEBHOOKS_CLIENT) private readonly webhooks: ServiceClient,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const [database, query, stats, webhooks] = await Promise.all([
      this.db
        .query('SELECT 1')
        .then(() => 'up' as const)
        .catch(() => 'down' as const),
      downstream(this.query),
      downstream(this.stats),
      downstream(this.webhooks),
    ]);
    const broker = this.query.isConnected() ? ('up' as const) : ('down' as const);
    const ok = database === 'up' && broker === 'up';
    await reply.status(ok ? 200 : 503).send({
      status: ok ? 'ok' : 'unavailable',
      checks: { database, broker },
      detail: { services: { query, stats, webhooks } },
    });
  }
}

async function downstream(client: ServiceClient): Promise<Downstream> {
  const consumers = await client.consumers();
  return { status: consumers === null ? 'unknown' : consumers > 0 ? 'up' : 'down', consumers };
}
