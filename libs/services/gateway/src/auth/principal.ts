import { KeyHolderRecord } from '@cars/accounts';
import type { MeterTicket } from '../metering/usage-meter';

/** Who is calling: the key and its account as the key cache last read them. */
export type ApiPrincipal = KeyHolderRecord;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API access guard on authenticated routes. */
    principal?: ApiPrincipal;
    /** Set by the API access guard on counted routes: the unit this request holds. */
    meterTicket?: MeterTicket;
  }
}
