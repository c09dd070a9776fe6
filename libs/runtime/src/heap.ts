import { setFlagsFromString } from 'node:v8';

/** V8's own ceiling for the factor it picks by itself (`kMaxHeapGrowingFactor`): 4, i.e. 300 %. */
export const DEFAULT_HEAP_GROWING_PERCENT = 300;

/**
 * How far V8 lets the old generation grow past what its last full collection kept before it
 * starts the next one: `--heap-growing-percent` (a factor of 1 + percent/100; 0 = V8 picks the
 * factor itself after each collection). Read by V8 at every full collection, so setting it at
 * boot applies to the whole life of the process.
 *
 * Why not V8's own choice: a service here keeps a small live heap (~50 MB for the gateway) and
 * promotes little, so V8 judges its old generation slow-growing and keeps the limit ~1.1–1.3× the
 * live size; every page of a query (~80 KB decoded on the gateway, encoded on the query service)
 * then pushed it over within a second, and the gateway ran a full collection several times a
 * second — 28–30 % of its CPU on V8's helper threads against 14 % for the bare baseline
 * (docs/performance.md). With V8's own ceiling as a fixed factor the heap may reach ~4× its live
 * size (~200 MB for the gateway, within its 512 MiB limit in k8s/base/gateway.yaml), and the
 * gateway's CPU per request fell by a fifth to a quarter in tools/bench/query.
 */
export function setHeapGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0) throw new RangeError(`heap growing percent must be an integer ≥ 0, got ${percent}`);
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
