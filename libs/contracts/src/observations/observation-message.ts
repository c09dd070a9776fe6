/**
 * The body of a message on `observations` (docs/api/ingestion.md, "Message body"): one observation
 * as a JSON object, or a JSON array of observations (a scraper's page at once: one message, one
 * acknowledgement, for many). An array holds at most `MAX_OBSERVATIONS_PER_MESSAGE` observations
 * in at most `MAX_OBSERVATION_ARRAY_BYTES`; a larger one, or a body that is neither, is
 * dead-lettered whole. An invalid element is dead-lettered alone (its JSON as the body, its
 * position in `x-observation-index`); the others are applied. The message is acknowledged once
 * every observation in it is committed or dead-lettered.
 */
export const MAX_OBSERVATIONS_PER_MESSAGE = 1000;

/** Size bound of an array message (a single observation's own fields are bounded by its schema). */
export const MAX_OBSERVATION_ARRAY_BYTES = 2 * 1024 * 1024;
