import { Reservation } from '@cars/accounts';

/** One counted request's hold on the monthly allowance. */
export interface MeterTicket {
  reservation: Reservation;
  limit: number;
  /** Remaining after this request, if it counts. */
  remaining: number;
  periodEnd: Date;
  settled: boolean;
}
