import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RECOVERY_TIMEOUT_MS } from '../options';
import { RequestRecord } from './api-load';
import { FaultResult } from './faults';

export interface FaultTable {
  /** The API requests sent before the load ended, by the fault window they fell in (null: none). */
  byWindow: Map<FaultResult | null, RequestRecord[]>;
  /** One row per fault, and one for the requests outside every window. */
  faultRows: string[][];
  /** Every failed request, one line each (also written to failed-requests.log in the log folder). */
  failedLines: string[];
}

/**
 * The fault table: requests by the window their start fell in. A request belongs to the window in
 * which its answer or error came; else to the window it was in flight during (one lost with a
 * process waits out the gateway's RPC timeout, which may end after the recovery).
 */
export function faultTable(records: RequestRecord[], results: FaultResult[], loadEnd: number, logDir: string): FaultTable {
  const windowOf = (r: RequestRecord) => {
    const end = r.end || r.start;
    return results.find((f) => end >= f.start && end <= f.end) ?? results.find((f) => r.start <= f.end && end >= f.start) ?? null;
  };
  const byWindow = new Map<FaultResult | null, RequestRecord[]>();
  for (const r of records) {
    if (r.start > loadEnd) continue;
    const w = windowOf(r);
    byWindow.set(w, [...(byWindow.get(w) ?? []), r]);
  }
  const describeFailures = (list: RequestRecord[]) => {
    const kinds = new Map<string, number>();
    for (const r of list) if (!r.ok) kinds.set(r.outcome || 'no answer', (kinds.get(r.outcome || 'no answer') ?? 0) + 1);
    return [...kinds.entries()].map(([k, n]) => `${k} × ${n}`).join(', ') || '—';
  };
  const faultRows = results.map((f) => {
    const list = byWindow.get(f) ?? [];
    return [
      f.spec.title,
      ((f.end - f.start) / 1000).toFixed(1),
      String(list.length),
      String(list.filter((r) => !r.ok).length),
      describeFailures(list),
      f.recoveredMs === null ? `NOT within ${RECOVERY_TIMEOUT_MS / 1000} s` : (f.recoveredMs / 1000).toFixed(1),
      f.notes.join('; '),
    ];
  });
  const between = byWindow.get(null) ?? [];
  const failedLines = records
    .filter((r) => !r.ok && r.start <= loadEnd)
    .map((r) => {
      const w = windowOf(r);
      const took = r.end ? `${r.end - r.start} ms` : 'not sent';
      return `${new Date(r.start).toISOString()} ${w ? w.spec.id : 'outside'} ${r.route} via ${r.gateway || '-'}: ${r.outcome} (${took})`;
    });
  writeFileSync(join(logDir, 'failed-requests.log'), failedLines.join('\n') + '\n');
  faultRows.push(['(outside fault windows)', '', String(between.length), String(between.filter((r) => !r.ok).length), describeFailures(between), '', '']);

  return { byWindow, faultRows, failedLines };
}
