import { generateMasterKey, generateSigningSecret, SecretCipher } from '@cars/signing';
import { resolveDeliveryOptions } from '../config/delivery.options';
import { AttemptOutcome } from './attempt-outcome';
import { ClaimedDelivery, DeliveryStore } from './delivery-store';
import { Dispatcher } from './dispatcher.service';
import { Sender } from './sender';

/**
 * Outcomes are recorded in batches: under a steady stream of answers, one recording transaction
 * per 50 ms at most (each takes what finished meanwhile), not one per handful of answers as fast
 * as transactions return. Nothing waits beyond that, and a stop records what is left at once.
 */
describe('Dispatcher: recording outcomes', () => {
  const masterKey = generateMasterKey();
  const sealed = SecretCipher.fromEnv(masterKey).encrypt(generateSigningSecret());
  const options = resolveDeliveryOptions({ databaseUrl: 'unused', secretKeys: masterKey, perEndpointConcurrency: 10 });
  const ok: AttemptOutcome = { succeeded: true, status: 200, error: null, excerpt: null, durationMs: 1 };

  const deliveries = (n: number): ClaimedDelivery[] =>
    Array.from({ length: n }, (_, i) => ({
      id: `d${i}`,
      subscriptionId: 'endpoint-1',
      accountId: 'account-1',
      eventId: `evt_${i}`,
      eventType: 'auction.created',
      payload: '{}',
      url: 'https://receiver.example/hook',
      secret: { ciphertext: sealed.ciphertext, keyId: sealed.keyId },
      previousSecret: null,
      leaseToken: `token-${i}`,
      leaseExpiresAt: Date.now() + options.leaseMs,
      reservation: null,
      probe: false,
      inFlightCap: 10,
    }));

  /** A store that records in 5 ms and notes when each recording started and what it held. */
  const recordingStore = () => {
    const recordings: { at: number; size: number }[] = [];
    const store = {
      claim: async () => [],
      unclaim: async () => undefined,
      record: async (results: readonly unknown[]) => {
        recordings.push({ at: performance.now(), size: results.length });
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { openCircuits: [] };
      },
    } as unknown as DeliveryStore;
    return { store, recordings };
  };

  it('records a steady stream of answers in one transaction per 50 ms, every answer once', async () => {
    const { store, recordings } = recordingStore();
    // Every attempt answers in 10 ms: 10 at a time, 300 in ~300 ms, an answer every millisecond.
    const sender = { send: () => new Promise<AttemptOutcome>((resolve) => setTimeout(() => resolve(ok), 10)) } as unknown as Sender;
    const dispatcher = new Dispatcher(store, sender, options);
    const started = performance.now();
    dispatcher.take(deliveries(300));
    const recorded = () => recordings.reduce((sum, r) => sum + r.size, 0);
    const deadline = Date.now() + 5_000;
    while (recorded() < 300 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    const elapsed = performance.now() - started;
    await dispatcher.drain();

    expect(recordings.reduce((sum, r) => sum + r.size, 0)).toBe(300);
    // Back to back, 5 ms transactions would have been ~40 recordings of a few answers each.
    expect(recordings.length).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 1);
    // Timers may fire a little early against performance.now() (the loop's clock is read once per turn).
    for (let i = 1; i < recordings.length; i += 1) expect(recordings[i].at - recordings[i - 1].at).toBeGreaterThanOrEqual(45);
  });

  it('records a lone answer once the window has passed, and what is left at once when stopping', async () => {
    // Timers stand still unless advanced: a stop that waited for the window would never end.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'performance'] });
    try {
      const sizes: number[] = [];
      const store = {
        claim: async () => [],
        unclaim: async () => undefined,
        record: async (results: readonly unknown[]) => {
          sizes.push(results.length);
          return { openCircuits: [] };
        },
      } as unknown as DeliveryStore;
      const sender = { send: async () => ok } as unknown as Sender;
      const settle = async () => {
        for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
      };
      const dispatcher = new Dispatcher(store, sender, options);

      dispatcher.take(deliveries(1));
      await settle();
      expect(sizes).toEqual([]);
      await jest.advanceTimersByTimeAsync(50);
      await settle();
      expect(sizes).toEqual([1]);

      dispatcher.take(deliveries(3).map((d) => ({ ...d, id: `late-${d.id}` })));
      await settle();
      expect(sizes).toEqual([1]);
      await dispatcher.drain();
      expect(sizes).toEqual([1, 3]);
    } finally {
      jest.useRealTimers();
    }
  });
});
