import type { KeyHolderRecord, Reservation } from '@cars/accounts';

/**
 * Who is calling: the holder of an API key as the key cache last read it, or — on the account
 * area's routes only — the account of a console session, with `keyId` null (a session is not a
 * key, and never authorizes a route of the data API).
 */
export type ApiPrincipal = Omit<KeyHolderRecord, 'keyId'> & { keyId: string | null };

/** One counted request's hold on the monthly allowance. */
export interface MeterTicket {
  reservation: Reservation;
  limit: number;
  /** Remaining after this request, if it counts. */
  remaining: number;
  periodEnd: Date;
  settled: boolean;
}

/** What the API access guard attaches to a request. */
declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API access guard on authenticated routes. */
    principal?: ApiPrincipal;
    /** Set by the API access guard on counted routes: the unit this request holds. */
    meterTicket?: MeterTicket;
  }
}
