import { AdminCommand } from '../command';
import { accountsCommands } from './accounts.commands';
import { dbCommands } from './db.commands';
import { makesCommands } from './makes.commands';
import { pendingCommands } from './pending.commands';
import { queuesCommands } from './queues.commands';
import { secretsCommands } from './secrets.commands';

/** Every admin command. Add a feature's commands here. */
export const COMMANDS: AdminCommand[] = [...dbCommands, ...accountsCommands, ...makesCommands, ...pendingCommands, ...queuesCommands, ...secretsCommands];
