import { counter } from '@cars/metrics';

const labelNames = ['queue'] as const;

/** What the queue consumers did with the messages they took, by queue (a bounded set of names). */
export const consumerMetrics = {
  consumed: counter({ name: 'messages_consumed_total', help: 'Messages taken from a queue by its consumer.', labelNames }),
  acked: counter({ name: 'messages_acked_total', help: 'Messages acknowledged after their work committed.', labelNames }),
  rejected: counter({
    name: 'messages_rejected_total',
    help: 'Messages handed back to the broker (requeued after a failed batch, or refused without a dead-letter queue).',
    labelNames,
  }),
  deadLettered: counter({ name: 'messages_dead_lettered_total', help: 'Messages refused and published to a dead-letter queue, with the reason.', labelNames }),
};
