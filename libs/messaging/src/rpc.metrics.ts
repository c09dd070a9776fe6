import { histogram, LATENCY_BUCKETS } from '@cars/metrics';

/** Round trips of the gateway's requests to the services, by message pattern and outcome. */
export const rpcDuration = histogram({
  name: 'rpc_client_duration_seconds',
  help: 'Round trip of a request to a service over the broker (or in-process), by pattern and outcome (answered, unavailable).',
  labelNames: ['pattern', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
});

/** Times one request: the outcome is `answered` when the service replied (whatever it replied). */
export async function timedRpc<T>(pattern: string, request: () => Promise<T>): Promise<T> {
  const end = rpcDuration.startTimer({ pattern });
  try {
    const reply = await request();
    end({ outcome: 'answered' });
    return reply;
  } catch (error) {
    end({ outcome: 'unavailable' });
    throw error;
  }
}
