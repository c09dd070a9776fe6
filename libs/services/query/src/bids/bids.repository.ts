import { Injectable } from '@nestjs/common';
import { SqlClient } from '../sql/sql-client';
import { BidsPageRequest, bidsPageQuery, bidsTotalQuery } from './bid-query';

/** One bid's JSON text (see BID_FIELDS), its id and the exact total of the filters. */
export interface BidRow {
  item: string;
  /** The bid id (bigint as text). */
  id: string;
  total: number;
}

@Injectable()
export class BidsRepository {
  constructor(private readonly sql: SqlClient) {}

  async page(request: BidsPageRequest): Promise<BidRow[]> {
    const { text, values } = bidsPageQuery(request);
    return this.sql.query<BidRow>(text, values);
  }

  /** `found` is false when no auction has this id. */
  async total(request: BidsPageRequest): Promise<{ found: boolean; total: number }> {
    const { text, values } = bidsTotalQuery(request);
    const [row] = await this.sql.query<{ found: boolean; total: number }>(text, values);
    return row ?? { found: false, total: 0 };
  }
}
