import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { ticketHeaders } from './usage-meter';

/**
 * Sets X-RateLimit-Limit/-Remaining/-Reset on every response of a counted request, from the
 * status it leaves with (a response that will not count shows the unit as given back).
 * A Fastify onSend hook, so error responses written by the error filter get them too.
 */
@Injectable()
export class MeteringHooks implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    // Hooks added before the server is ready apply to every route.
    // A callback hook, not an async one: no promise per response.
    fastify.addHook('onSend', (request, reply, payload, done) => {
      const ticket = request.meterTicket;
      if (ticket) void reply.headers(ticketHeaders(ticket, reply.statusCode));
      done(null, payload);
    });
  }
}
