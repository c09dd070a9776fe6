import { describeBacklog, ObservationProcessor } from '@cars/service-change-detector';
import { AdminCommand } from '../command';

/**
 * `pending:show`: observations parked while their context (source, parent auction) is missing —
 * how many, the oldest's age and why. They go on by themselves when the context arrives; a count
 * that only grows means the context never comes (a source to add, a parent never observed).
 */
export const pendingCommands: AdminCommand[] = [
  {
    name: 'pending:show',
    usage: 'pending:show',
    async run({ db }) {
      return describeBacklog(await new ObservationProcessor(await db()).pendingSummary());
    },
  },
];
