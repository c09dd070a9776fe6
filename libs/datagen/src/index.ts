export * from './observation';
export {
  DEFAULT_AUCTIONS,
  DEFAULT_LIVE,
  DEFAULT_SEED,
  FIRST_END_DATE,
  LIVE_WINDOW_DAYS,
  RECENT_BID_DAYS,
  currentUtcDate,
  describeCounts,
  generateObservations,
  idNamespace,
  newSummary,
  observationCount,
  type GenerateOptions,
  type GenerationSummary,
} from './generator';
export { writeLines, writeNdjsonFile, type WriteResult } from './write';
export { isValidVin, vinCheckDigit } from './vin';
export { parseDate } from './time';
export { Rng } from './prng';
