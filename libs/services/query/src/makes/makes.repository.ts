import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

@Injectable()
export class MakesRepository {
  constructor(private readonly db: DataSource) {}

  async listMakeNames(): Promise<string[]> {
    const rows: { name: string }[] = await this.db.query(`SELECT name FROM makes ORDER BY lower(name), name`);
    return rows.map((r) => r.name);
  }

  /** The canonical make with this exact name, or else one that differs only in letter case. */
  async findMake(name: string): Promise<{ id: number; name: string } | null> {
    const rows: { id: number; name: string }[] = await this.db.query(
      `SELECT id, name FROM makes WHERE lower(name) = lower($1) ORDER BY (name = $1) DESC LIMIT 1`,
      [name],
    );
    return rows[0] ?? null;
  }

  async listModelNames(makeId: number): Promise<string[]> {
    const rows: { name: string }[] = await this.db.query(
      `SELECT name FROM models WHERE make_id = $1 ORDER BY lower(name), name`,
      [makeId],
    );
    return rows.map((r) => r.name);
  }
}
