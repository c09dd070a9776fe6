/** Headers of a message on `observations.dead-letter` (the original body is kept unchanged). */
export const ObservationHeaders = {
  /** Why the observation was rejected (validation messages or the database error). */
  RejectionReason: 'x-rejection-reason',
  /** ISO 8601 time of rejection. */
  RejectedAt: 'x-rejected-at',
  /** Set by `ingest --wait`: the run whose observations' outcomes are recorded (`ingest_outcomes`). */
  IngestRun: 'x-ingest-run',
} as const;
