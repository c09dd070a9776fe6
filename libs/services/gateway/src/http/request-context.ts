import type { ApiPrincipal } from '../auth/principal';
import type { MeterTicket } from '../metering/meter-ticket';

/** What the API access guard attaches to a request. */
declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API access guard on authenticated routes. */
    principal?: ApiPrincipal;
    /** Set by the API access guard on counted routes: the unit this request holds. */
    meterTicket?: MeterTicket;
  }
}
