import { Module } from '@nestjs/common';

/** The webhooks service. */
@Module({})
export class WebhooksModule {}
