export * from './delivery.module';
export * from './event-intake.service';
