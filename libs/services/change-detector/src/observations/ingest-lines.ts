import { Observation, errorMessage } from '@cars/contracts';
import { ObservationProcessor, parseObservation, ProcessResult } from './observation.processor';

export interface LineIngestResult {
  accepted: number;
  /** Line numbers (1-based, blank lines counted) with the reason, like the dead-letter queue's. */
  rejected: { line: number; reason: string }[];
  pending: number;
  events: number;
}

/**
 * Runs NDJSON observations through the processor without RabbitMQ (the quick start's loopback
 * ingestion entry point): same validation and batching as the consumer, one transaction per
 * batch; malformed lines are reported instead of dead-lettered.
 */
export async function ingestObservationLines(
  processor: ObservationProcessor,
  lines: Iterable<string> | AsyncIterable<string>,
  options: { batchSize?: number } = {},
): Promise<LineIngestResult> {
  const batchSize = options.batchSize ?? 250;
  const result: LineIngestResult = { accepted: 0, rejected: [], pending: 0, events: 0 };
  let batch: Observation[] = [];
  let batchLines: number[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const outcome: ProcessResult = await processor.processBatch(batch);
    result.accepted += outcome.accepted;
    result.pending += outcome.pendingIndexes.length;
    result.events += outcome.events;
    for (const r of outcome.rejected) result.rejected.push({ line: batchLines[r.index], reason: r.reason });
    batch = [];
    batchLines = [];
  };
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      result.rejected.push({ line: lineNumber, reason: `malformed JSON: ${errorMessage(error)}` });
      continue;
    }
    const parsed = parseObservation(json);
    if (!parsed.ok) {
      result.rejected.push({ line: lineNumber, reason: parsed.reason });
      continue;
    }
    batch.push(parsed.value);
    batchLines.push(lineNumber);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return result;
}
