import { DynamicModule, Module } from '@nestjs/common';
import { DispatchRepository, FanOutRepository, RetentionRepository } from '@cars/webhook-store';
import { DELIVERY_OPTIONS, DeliveryOptions, resolveDeliveryOptions } from './config/delivery.options';
import { DeliveryStore } from './dispatch/delivery-store';
import { Dispatcher } from './dispatch/dispatcher.service';
import { Sender } from './dispatch/sender';
import { EventIntakeService } from './event-intake.service';
import { FanOutService } from './fan-out/fan-out.service';
import { DeliveryBacklogMetrics } from './metrics/delivery.metrics';
import { RetentionService } from './retention/retention.service';
import { DeliveryWakeup } from './wakeup/delivery-wakeup';

/**
 * The delivery worker: fan-out of events to matching subscriptions, then signed, leased,
 * allowance-aware attempts with retries. Needs a DatabaseModule from its host app; RabbitMQ is
 * optional (it only wakes the fan-out).
 */
@Module({})
export class DeliveryModule {
  static forRoot(options: DeliveryOptions): DynamicModule {
    return {
      module: DeliveryModule,
      providers: [
        { provide: DELIVERY_OPTIONS, useValue: resolveDeliveryOptions(options) },
        FanOutRepository,
        DispatchRepository,
        RetentionRepository,
        FanOutService,
        DeliveryStore,
        Sender,
        Dispatcher,
        DeliveryWakeup,
        EventIntakeService,
        RetentionService,
        DeliveryBacklogMetrics,
      ],
      exports: [EventIntakeService, DeliveryWakeup, Dispatcher, FanOutService, DeliveryStore, RetentionService],
    };
  }
}
