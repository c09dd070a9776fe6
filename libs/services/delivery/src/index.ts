export * from './delivery.module';
export * from './event-intake.service';
export * from './config/delivery.options';
export * from './dispatch/delivery-store';
export * from './dispatch/dispatcher.service';
export * from './fan-out/fan-out.service';
export * from './wakeup/delivery-wakeup';
export * from './retention/retention.service';
