export * from './observation.dto';
export * from './observation-headers';
export * from './observation.schema';
