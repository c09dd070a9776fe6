import { runMigrations } from '@cars/persistence';
import { AdminCommand } from '../command';

export const dbCommands: AdminCommand[] = [
  {
    name: 'db:migrate',
    usage: 'db:migrate',
    async run({ db }) {
      const dataSource = await db();
      await runMigrations(dataSource);
      const rows: { name: string }[] = await dataSource.query(`SELECT name FROM schema_migrations ORDER BY id`);
      return { applied: rows.map((r) => r.name) };
    },
  },
  {
    name: 'db:revert',
    usage: 'db:revert',
    async run({ db }) {
      const dataSource = await db();
      await dataSource.undoLastMigration({ transaction: 'each' });
      return { reverted: true };
    },
  },
];
