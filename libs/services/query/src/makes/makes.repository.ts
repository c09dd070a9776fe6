import { Injectable } from '@nestjs/common';
import { findMakeQuery } from '@cars/persistence';
import { SqlClient } from '../sql/sql-client';

@Injectable()
export class MakesRepository {
  constructor(private readonly sql: SqlClient) {}

  async listMakeNames(): Promise<string[]> {
    const rows = await this.sql.query<{ name: string }>(`SELECT name FROM makes ORDER BY lower(name), name`, []);
    return rows.map((r) => r.name);
  }

  /** The canonical make with this exact name, or else one that differs only in letter case. */
  async findMake(name: string): Promise<{ id: number; name: string } | null> {
    const { text, values } = findMakeQuery(name);
    const rows = await this.sql.query<{ id: number; name: string }>(text, values);
    return rows[0] ?? null;
  }

  async listModelNames(makeId: number): Promise<string[]> {
    const rows = await this.sql.query<{ name: string }>(`SELECT name FROM models WHERE make_id = $1 ORDER BY lower(name), name`, [makeId]);
    return rows.map((r) => r.name);
  }
}
