import { createDataSource, pgPoolOf } from '@cars/persistence';
import { createIsolatedDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';
import { PgSqlClient } from '../sql/sql-client';
import { MakesRepository } from './makes.repository';

/** MakesRepository against a migrated database of its own: the canonical make and model names. */
describe('MakesRepository (PostgreSQL)', () => {
  let drop: (() => Promise<void>) | undefined;
  let db: DataSource;
  let repository: MakesRepository;
  const makeIds: Record<string, number> = {};

  beforeAll(async () => {
    const database = await createIsolatedDatabase('makes_repository');
    drop = database.drop;
    db = await createDataSource({ url: database.url, poolSize: 4, applicationName: 'test' }).initialize();
    repository = new MakesRepository(new PgSqlClient(pgPoolOf(db)));
    const makes: { id: number; name: string }[] = await db.query(
      `INSERT INTO makes (name) VALUES ('Porsche'), ('alfa Romeo'), ('BMW'), ('Zagato'), ('Mercedes-Benz') RETURNING id, name`,
    );
    for (const make of makes) makeIds[make.name] = make.id;
    await db.query(
      `INSERT INTO models (make_id, name) VALUES ($1, '911'), ($1, 'cayenne'), ($1, 'Boxster'), ($1, '356'), ($2, 'M3')`,
      [makeIds.Porsche, makeIds.BMW],
    );
  });

  afterAll(async () => {
    await db?.destroy();
    await drop?.();
  });

  it('lists every make name alphabetically, ignoring letter case', async () => {
    expect(await repository.listMakeNames()).toEqual(['alfa Romeo', 'BMW', 'Mercedes-Benz', 'Porsche', 'Zagato']);
  });

  it('finds a make by its exact name, or by one that differs only in letter case', async () => {
    expect(await repository.findMake('Porsche')).toEqual({ id: makeIds.Porsche, name: 'Porsche' });
    expect(await repository.findMake('PORSCHE')).toEqual({ id: makeIds.Porsche, name: 'Porsche' });
    expect(await repository.findMake('Alfa Romeo')).toEqual({ id: makeIds['alfa Romeo'], name: 'alfa Romeo' });
    expect(await repository.findMake('Porsch')).toBeNull();
    expect(await repository.findMake('%')).toBeNull();
    expect(await repository.findMake(`Porsche' OR '1'='1`)).toBeNull();
  });

  it("lists one make's models alphabetically, ignoring letter case", async () => {
    expect(await repository.listModelNames(makeIds.Porsche)).toEqual(['356', '911', 'Boxster', 'cayenne']);
    expect(await repository.listModelNames(makeIds.BMW)).toEqual(['M3']);
    expect(await repository.listModelNames(makeIds.Zagato)).toEqual([]);
  });
});
