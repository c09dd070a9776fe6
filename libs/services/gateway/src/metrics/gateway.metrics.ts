import { counter, gauge, histogram, LATENCY_BUCKETS, renderMetrics } from '@cars/metrics';
import type { FastifyInstance } from 'fastify';

/** Requests by route template (never the raw path: ids would make the labels unbounded). */
export const httpRequests = counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered by the gateway, by method, route template and status code.',
  labelNames: ['method', 'route', 'status'] as const,
});

export const httpRequestDuration = histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request arriving at the gateway to its answer, by method, route template and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
});

/**
 * 429s of API access: `in_flight` (the account's requests in flight), `burst` (token bucket per
 * key) or `monthly` (the plan's allowance).
 */
export const allowanceRejections = counter({
  name: 'api_allowance_rejections_total',
  help: 'Requests refused with 429 by the gateway, by cause (in_flight, burst, monthly).',
  labelNames: ['cause'] as const,
});

/**
 * Statements of metering on the ledger (docs/adr/0007-metering-leases.md): `grant` (a block of
 * units leased), `settle` (spent units to used, the lease renewed), `close` (an idle or retiring
 * lease settled and ended), `sweep` (expired leases of dead gateways given back). Divided by the
 * counted requests, what metering costs the database.
 */
export const meteringStatements = counter({
  name: 'gateway_metering_ledger_statements_total',
  help: 'Ledger statements of metering by kind (grant, settle, close, sweep).',
  labelNames: ['statement'] as const,
});

/** Units of expired leases this gateway's sweeps gave back (a gateway died holding them). */
export const expiredLeaseUnitsReleased = counter({
  name: 'gateway_metering_expired_lease_units_released_total',
  help: 'Units of allowance of expired leases (gateways that died holding them) released by this gateway.',
});

/** What the lease books of this process hold, summed (`state`: unspent, in_flight, unsettled). */
export interface LeaseHoldings {
  unspent: number;
  inFlight: number;
  unsettled: number;
}

const leaseHoldingSources = new Set<() => LeaseHoldings>();

/**
 * Units this gateway's leases hold in the ledger's `reserved`, by state: `unspent` (leased, not
 * taken yet), `in_flight` (held by a request), `unsettled` (spent; reach `used` with the lease's
 * next settlement, within a second). Their sum over all gateways, plus deliveries in flight, is
 * the ledger's `reserved`.
 */
gauge({
  name: 'gateway_metering_leased_units',
  help: 'Units of allowance held by this gateway’s leases, by state (unspent, in_flight, unsettled).',
  labelNames: ['state'] as const,
  collect() {
    const sum = { unspent: 0, inFlight: 0, unsettled: 0 };
    for (const source of leaseHoldingSources) {
      const h = source();
      sum.unspent += h.unspent;
      sum.inFlight += h.inFlight;
      sum.unsettled += h.unsettled;
    }
    this.set({ state: 'unspent' }, sum.unspent);
    this.set({ state: 'in_flight' }, sum.inFlight);
    this.set({ state: 'unsettled' }, sum.unsettled);
  },
});

/** Adds a lease book to the gauge; the returned function removes it. */
export function reportLeaseHoldings(source: () => LeaseHoldings): () => void {
  leaseHoldingSources.add(source);
  return () => leaseHoldingSources.delete(source);
}

/** What a request that matched no route is labelled: the path itself could be anything. */
const UNMATCHED = 'unmatched';

/**
 * Counts and times every answer of the gateway's Fastify instance, and serves `GET /metrics`
 * (Prometheus text format, outside the API: no key, not counted, not in the OpenAPI document).
 */
export function instrumentGateway(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? UNMATCHED, status: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpRequestDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  fastify.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await renderMetrics();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
}
