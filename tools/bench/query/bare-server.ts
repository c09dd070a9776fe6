import 'reflect-metadata';
import {
  AuctionsRepository,
  AuctionsService,
  BidsRepository,
  BidsService,
  PgSqlClient,
} from '@cars/service-query';
import { RpcReply } from '@cars/contracts';
import { CostlyTurns } from '@cars/persistence';
import { BaseEnv, loadEnv, setHeapGrowth } from '@cars/runtime';
import Fastify, { FastifyReply } from 'fastify';
import { Pool } from 'pg';
import { runBenchChild } from '../common/child';

/**
 * The baseline of the query benchmark: bare Fastify and a `pg` pool running the same SQL as the
 * query service (its repositories and services, count cache included) — no Nest, no broker, no
 * DTO validation, no error envelope — with the services' heap setting (HEAP_GROWING_PERCENT, as
 * every app applies it at boot), so the two differ in their work, not in their GC policy. Started
 * as its own process by main.ts:
 *
 *   DATABASE_URL=… PORT=0 node dist/tools/bench/query/bare-server.js
 *
 * Prints `listening <port>` when ready.
 */

/** Numbers as numbers; everything else as given (the bench only sends valid requests). */
function parseQuery(query: Record<string, string>): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(query)) out[key] = /^\d{1,15}$/.test(value) ? Number(value) : value;
  return out;
}

async function main(): Promise<{ close(): Promise<void> }> {
  setHeapGrowth(loadEnv(BaseEnv).HEAP_GROWING_PERCENT);
  const pool = new Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
    application_name: 'bench-query-bare',
  });
  const sql = new PgSqlClient(pool);
  // Costly keyword statements take turns as in the query service.
  const auctions = new AuctionsService(new AuctionsRepository(sql, new CostlyTurns(1, 60_000)));
  const bids = new BidsService(new BidsRepository(sql));
  const app = Fastify({ logger: false });

  // The services answer with the body's JSON text, as the gateway sends it.
  const send = <T>(reply: FastifyReply, result: RpcReply<T>) =>
    result.ok
      ? reply.status(200).type('application/json; charset=utf-8').send(result.value)
      : reply.status(result.status).send(result.body);

  app.get('/auctions', async (request, reply) =>
    send(reply, await auctions.search(parseQuery(request.query as Record<string, string>))),
  );
  app.get('/auctions/live', async (request, reply) =>
    send(reply, await auctions.live(parseQuery(request.query as Record<string, string>))),
  );
  app.get('/auctions/:auction_id/bids', async (request, reply) =>
    send(
      reply,
      await bids.list({
        ...parseQuery(request.query as Record<string, string>),
        auction_id: (request.params as { auction_id: string }).auction_id,
      }),
    ),
  );

  const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  console.log(`listening ${new URL(address).port}`);
  return {
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

runBenchChild(main);
