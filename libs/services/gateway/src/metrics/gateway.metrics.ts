import { counter, histogram, LATENCY_BUCKETS, renderMetrics } from '@cars/metrics';
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
