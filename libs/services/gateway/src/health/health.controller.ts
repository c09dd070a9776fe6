import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { QUERY_CLIENT, ServiceClient } from '@cars/messaging';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';

@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    private readonly db: DataSource,
    @Inject(QUERY_CLIENT) private readonly broker: ServiceClient,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const database = await this.db
      .query('SELECT 1')
      .then(() => 'up' as const)
      .catch(() => 'down' as const);
    const broker = this.broker.isConnected() ? ('up' as const) : ('down' as const);
    const ok = database === 'up' && broker === 'up';
    await reply.status(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks: { database, broker } });
  }
}
