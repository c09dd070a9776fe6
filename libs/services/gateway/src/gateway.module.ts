import { Module } from '@nestjs/common';
import { ConsoleModule } from '@cars/console';
import { AuctionsController } from './auctions/auctions.controller';
import { AccountModule } from './account/account.module';
import { ApiAccessModule } from './auth/api-access.module';
import { GatewayReadiness } from './health/gateway-readiness';
import { HealthController } from './health/health.controller';
import { RootController } from './health/root.controller';
import { MakesController } from './makes/makes.controller';
import { McpModule } from './mcp/mcp.module';
import { EventSchemaController } from './schemas/event-schema.controller';
import { StatsController } from './stats/stats.controller';
import { WebhooksController } from './webhooks/webhooks.controller';

/** The public HTTP edge. Needs a DatabaseModule and a MessagingModule from its host app. */
@Module({
  imports: [ApiAccessModule, McpModule, ConsoleModule, AccountModule],
  controllers: [RootController, HealthController, MakesController, AuctionsController, StatsController, WebhooksController, EventSchemaController],
  providers: [GatewayReadiness],
  exports: [GatewayReadiness],
})
export class GatewayModule {}
