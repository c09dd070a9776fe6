import { DynamicModule, Module } from '@nestjs/common';
import { DestinationGuard } from './config/destination-guard';
import { SecretBox } from './config/secret-box';
import { WEBHOOKS_OPTIONS, WebhooksOptions } from './config/webhooks.options';
import { DeliveriesHandler } from './deliveries/deliveries.handler';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { DeliveriesService } from './deliveries/deliveries.service';
import { AccountGate } from './plans/account-gate';
import { PlanSweeper } from './plans/plan-sweeper';
import { SubscriptionsHandler } from './subscriptions/subscriptions.handler';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository';
import { SubscriptionsService } from './subscriptions/subscriptions.service';

/**
 * The webhooks service: subscriptions, their secrets, test events and the delivery records'
 * management routes. Needs a DatabaseModule from its host app.
 */
@Module({})
export class WebhooksModule {
  static forRoot(options: WebhooksOptions): DynamicModule {
    return {
      module: WebhooksModule,
      controllers: [SubscriptionsHandler, DeliveriesHandler],
      providers: [
        { provide: WEBHOOKS_OPTIONS, useValue: options },
        DestinationGuard,
        SecretBox,
        AccountGate,
        PlanSweeper,
        SubscriptionsRepository,
        SubscriptionsService,
        DeliveriesRepository,
        DeliveriesService,
      ],
    };
  }
}
