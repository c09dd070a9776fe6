import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorMessage } from '@cars/contracts';
import { SecretCipher, webhookHeaders } from '@cars/signing';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';
import { AttemptOutcome } from './attempt-outcome';
import { ClaimedDelivery, DeliveryStore } from './delivery-store';
import { Sender } from './sender';

/**
 * Claims due deliveries and sends them, up to `concurrency` attempts in flight per process and
 * `perEndpointConcurrency` per endpoint (one slow receiver cannot starve the others). Woken by
 * new deliveries, retries and finished attempts; the sweep wakes it too.
 */
@Injectable()
export class Dispatcher {
  private readonly logger = new Logger('Dispatcher');
  private readonly cipher: SecretCipher;
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private pumping: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly store: DeliveryStore,
    private readonly sender: Sender,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {
    this.cipher = SecretCipher.fromEnv(options.secretKeys);
  }

  get activeAttempts(): number {
    return this.attempts.size;
  }

  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump().finally(() => (this.pumping = null));
  }

  /** Stops claiming and waits for the attempts in flight to be recorded. */
  async drain(): Promise<void> {
    this.stopped = true;
    await this.pumping;
    await Promise.all([...this.attempts]);
  }

  private async pump(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        const room = this.options.concurrency - this.attempts.size;
        if (room <= 0 || this.stopped) break;
        const saturated = [...this.inFlight].filter(([, n]) => n >= this.options.perEndpointConcurrency).map(([id]) => id);
        let claimed: ClaimedDelivery[];
        try {
          claimed = await this.store.claim(room, saturated);
        } catch (error) {
          this.logger.warn(`claiming deliveries failed, retried at the next wake-up: ${errorMessage(error)}`);
          return;
        }
        for (const delivery of claimed) this.start(delivery);
        if (claimed.length < room) break;
      }
    } while (this.again && !this.stopped);
  }

  private start(delivery: ClaimedDelivery): void {
    this.inFlight.set(delivery.subscriptionId, (this.inFlight.get(delivery.subscriptionId) ?? 0) + 1);
    const attempt = this.attempt(delivery).finally(() => {
      const left = (this.inFlight.get(delivery.subscriptionId) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(delivery.subscriptionId);
      else this.inFlight.set(delivery.subscriptionId, left);
      this.attempts.delete(attempt);
      this.wake();
    });
    this.attempts.add(attempt);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    let outcome: AttemptOutcome;
    try {
      const secrets = [this.cipher.decrypt(delivery.secret.ciphertext, delivery.secret.keyId)];
      if (delivery.previousSecret) secrets.push(this.cipher.decrypt(delivery.previousSecret.ciphertext, delivery.previousSecret.keyId));
      const headers = webhookHeaders({ msgId: delivery.eventId, timestamp: new Date(), body: delivery.payload, secrets });
      outcome = await this.sender.send(delivery.url, { ...headers }, delivery.payload);
    } catch (error) {
      // Signing failed (a master key missing from WEBHOOK_SECRET_KEY): the lease runs out and the
      // sweep counts the attempt as interrupted, with the unit released — nothing is lost.
      this.logger.error(`delivery ${delivery.id} could not be signed: ${errorMessage(error)}`);
      return;
    }
    try {
      await this.store.record(delivery, outcome);
    } catch (error) {
      this.logger.warn(`recording delivery ${delivery.id} failed; its lease expiry retries it: ${errorMessage(error)}`);
    }
  }
}
