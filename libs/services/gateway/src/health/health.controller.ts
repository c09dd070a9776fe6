import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiValidationError } from '../auctions/api-responses';
import { ApiNoCredentials, Public } from '../auth/auth.decorators';
import { GatewayReadiness } from './gateway-readiness';

class LiveDto {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';
}

class ReadyChecksDto {
  @ApiProperty({ enum: ['up', 'down'], description: 'PostgreSQL answers.' })
  database: 'up' | 'down';

  @ApiProperty({ enum: ['up', 'down'], description: 'The RabbitMQ connection is open.' })
  broker: 'up' | 'down';
}

class DownstreamDto {
  @ApiProperty({ enum: ['up', 'down', 'unknown'], description: '`down`: nobody consumes the service queue.' })
  status: 'up' | 'down' | 'unknown';

  @ApiProperty({ type: 'integer', nullable: true, description: 'Instances consuming the service queue.' })
  consumers: number | null;
}

class ReadyServicesDto {
  @ApiProperty({ type: DownstreamDto })
  query: DownstreamDto;

  @ApiProperty({ type: DownstreamDto })
  stats: DownstreamDto;

  @ApiProperty({ type: DownstreamDto })
  webhooks: DownstreamDto;
}

class ReadyDetailDto {
  @ApiProperty({ type: ReadyServicesDto })
  services: ReadyServicesDto;
}

class ReadyDto {
  @ApiProperty({ enum: ['ok', 'unavailable'] })
  status: 'ok' | 'unavailable';

  @ApiProperty({ type: ReadyChecksDto })
  checks: ReadyChecksDto;

  @ApiProperty({ type: ReadyDetailDto, description: 'Shown to operators; never decides readiness.' })
  detail: ReadyDetailDto;
}

/**
 * Liveness and readiness of the gateway itself (its database and broker connection decide
 * readiness), with the services behind it in `detail.services`: how many instances consume each
 * RPC queue. A service with none answers 503 until one is back, but the gateway stays ready — a
 * restart of the gateway would not help.
 */
@ApiTags('Health')
@Public()
@ApiNoCredentials()
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: GatewayReadiness) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({ type: LiveDto })
  @ApiValidationError()
  live(): LiveDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: database and broker reachable; the services behind the gateway in `detail`' })
  @ApiOkResponse({ type: ReadyDto })
  @ApiValidationError()
  @ApiServiceUnavailableResponse({ type: ReadyDto, description: 'The database or the broker is unreachable.' })
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const [checks, detail] = await Promise.all([this.readiness.checks(), this.readiness.detail()]);
    const ok = checks.database === 'up' && checks.broker === 'up';
    const body: ReadyDto = { status: ok ? 'ok' : 'unavailable', checks, detail };
    await reply.status(ok ? 200 : 503).send(body);
  }
}
