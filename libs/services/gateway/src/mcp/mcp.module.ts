import { Module } from '@nestjs/common';
import { ApiAccessModule } from '../auth/api-access.module';
import { McpController } from './mcp.controller';
import { McpService } from './mcp.service';

/** `/mcp`: the Model Context Protocol endpoint for AI agents, over the REST routes' own calls (docs/api/mcp.md). */
@Module({
  imports: [ApiAccessModule],
  controllers: [McpController],
  providers: [McpService],
})
export class McpModule {}
