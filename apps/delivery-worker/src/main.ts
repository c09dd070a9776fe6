import 'reflect-metadata';
import { exitOnBootFailure, runWorker } from '@cars/runtime';
import { DeliveryModule, EventIntakeService } from '@cars/service-delivery';

runWorker({
  name: 'delivery-worker',
  module: (env) => DeliveryModule.forRoot({ rabbitmqUrl: env.RABBITMQ_URL }),
  probes: [EventIntakeService],
}).catch(exitOnBootFailure);
