import { Server } from 'node:http';
import { renderMetrics } from '@cars/metrics';
import { httpTimeoutsOf, HttpTimeoutsEnv } from './config';
import { loadEnv } from './env';
import { createTimedHttpServer, HttpTimeouts } from './http-edge';

export type ReadinessCheck = () => Promise<Record<string, 'up' | 'down'>>;

/** Figures shown beside the checks (`detail`), never deciding readiness. */
export type ReadinessDetail = () => Promise<Record<string, unknown>>;

/**
 * Liveness and readiness over plain HTTP for apps that serve no HTTP of their own (the
 * services behind the broker), and for the gateway on a port apart from its API:
 * `GET /health/live` and `GET /health/ready` for Kubernetes probes, and `GET /metrics` for
 * Prometheus.
 */
export class HealthServer {
  private server?: Server;

  constructor(
    private readonly check: ReadinessCheck,
    private readonly detail?: ReadinessDetail,
    /** Default: HTTP_*_TIMEOUT_MS of the environment, like the gateway's. */
    private readonly timeouts?: HttpTimeouts,
  ) {}

  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    const timeouts = this.timeouts ?? httpTimeoutsOf(loadEnv(HttpTimeoutsEnv));
    this.server = createTimedHttpServer(timeouts, (req, res) => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/health/live') return send(200, { status: 'ok' });
      if (req.url === '/metrics') {
        renderMetrics().then(
          ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
          () => send(500, { error: 'Internal Server Error', message: 'metrics could not be collected' }),
        );
        return undefined;
      }
      if (req.url === '/health/ready') {
        Promise.all([this.check(), this.detail?.().catch(() => undefined)]).then(
          ([checks, detail]) => {
            const ready = Object.values(checks).every((state) => state === 'up');
            const body: Record<string, unknown> = { status: ready ? 'ok' : 'unavailable', checks };
            if (detail && Object.keys(detail).length > 0) body.detail = detail;
            send(ready ? 200 : 503, body);
          },
          () => send(503, { status: 'unavailable' }),
        );
        return undefined;
      }
      return send(404, { error: 'Not Found', message: 'Unknown health route' });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, host, resolve));
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : port;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
