import { migrateAndLoadReference } from '@cars/service-change-detector';
import { AdminCommand } from '../command';

export const dbCommands: AdminCommand[] = [
  {
    // The deploy path's one database step: migrations, then the shipped reference catalog.
    name: 'db:migrate',
    usage: 'db:migrate',
    async run({ db }) {
      return migrateAndLoadReference(await db());
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
