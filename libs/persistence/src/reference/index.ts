export * from './sources';
export * from './fx';
export * from './catalog';
export * from './colors';
export { BODY_CODES } from './catalog-types';
export * from './make-lookup';
