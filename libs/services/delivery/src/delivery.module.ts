import { DynamicModule, Module } from '@nestjs/common';
import { EventIntakeService } from './event-intake.service';

/** The delivery worker: event intake from `delivery.events`. */
@Module({})
export class DeliveryModule {
  static forRoot(options: { rabbitmqUrl: string }): DynamicModule {
    return {
      module: DeliveryModule,
      providers: [{ provide: EventIntakeService, useFactory: () => new EventIntakeService(options.rabbitmqUrl) }],
      exports: [EventIntakeService],
    };
  }
}
