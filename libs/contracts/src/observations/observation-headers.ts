/**
 * Headers of a message on `observations.dead-letter` (the original body is kept unchanged; for
 * one refused element of an array message, the body is that element's JSON).
 */
export const ObservationHeaders = {
  /** Why the observation was rejected (validation messages or the database error). */
  RejectionReason: 'x-rejection-reason',
  /** ISO 8601 time of rejection. */
  RejectedAt: 'x-rejected-at',
  /** On the dead letter of one element of an array message: its position in the array (from 0). */
  Index: 'x-observation-index',
  /** Set by `ingest --wait`: the run whose observations' outcomes are recorded (`ingest_outcomes`). */
  IngestRun: 'x-ingest-run',
} as const;
