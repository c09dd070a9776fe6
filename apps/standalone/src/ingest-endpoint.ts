import { createServer, IncomingMessage, Server } from 'node:http';
import { createInterface } from 'node:readline';
import { ingestObservationLines, ObservationProcessor } from '@cars/service-change-detector';
import type { Logger } from 'pino';

/**
 * The quick start's ingestion entry point for `npm run ingest` without RabbitMQ: POST NDJSON
 * observations to http://127.0.0.1:<port>/ingest. Bound to loopback only.
 */
export async function startIngestEndpoint(
  processor: ObservationProcessor,
  log: Logger,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/ingest') {
      return reply(404, { error: 'Not Found', message: 'POST NDJSON observations to /ingest' });
    }
    ingestObservationLines(processor, linesOf(req)).then(
      (result) => reply(200, result),
      (error: unknown) => {
        log.error({ err: error }, 'ingest request failed');
        reply(500, { error: 'Internal Server Error', message: 'The observations could not be stored' });
      },
    );
    return undefined;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/ingest`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function linesOf(req: IncomingMessage): AsyncIterable<string> {
  return createInterface({ input: req, crlfDelay: Infinity });
}
