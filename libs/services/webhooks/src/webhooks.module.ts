import { DynamicModule, Module } from '@nestjs/common';
import { DeliveriesRepository, SubscriptionsRepository } from '@cars/webhook-store';
import { DestinationGuard } from './config/destination-guard';
import { SecretBox } from './config/secret-box';
import { WEBHOOKS_OPTIONS, WebhooksOptions } from './config/webhooks.options';
import { DeliveriesHandler } from './deliveries/deliveries.handler';
import { DeliveriesService } from './deliveries/deliveries.service';
import { EndpointScopes } from './endpoints/endpoint-scope';
import { AccountGate } from './plans/account-gate';
import { PlanSweeper } from './plans/plan-sweeper';
import { SubscriptionsHandler } from './subscriptions/subscriptions.handler';
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
        EndpointScopes,
        PlanSweeper,
        SubscriptionsRepository,
        SubscriptionsService,
        DeliveriesRepository,
        DeliveriesService,
      ],
    };
  }
}
