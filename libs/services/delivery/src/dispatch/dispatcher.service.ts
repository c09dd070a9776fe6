import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorMessage } from '@cars/contracts';
import { SecretCipher, webhookHeaders } from '@cars/signing';
import { DELIVERY_OPTIONS, LEASE_MARGIN_MS, ResolvedDeliveryOptions } from '../config/delivery.options';
import { countAttempt } from '../metrics/delivery.metrics';
import { AttemptOutcome } from './attempt-outcome';
import { ClaimedDelivery, DeliveryStore, Holdings } from './delivery-store';
import { Sender } from './sender';

/** Endpoint secrets kept decrypted, the most recently used. */
const OPENED_SECRETS = 4096;

/** Outcomes recorded per transaction, at most. */
const RECORD_BATCH = 500;

/**
 * How long the first outcome of a batch waits for company before its transaction starts, and the
 * least time between the starts of two recordings (unless a whole `RECORD_BATCH` waits). The
 * receiver has its event already (the slot was freed when it answered); what waits is the record,
 * and a crash meanwhile only means the attempt is made again. Under load a transaction then
 * records everything of its 50 ms — hundreds of attempts at saturation — instead of what finished
 * during the previous transaction's few milliseconds: the statements of a recording cost
 * PostgreSQL about the same for 30 attempts as for 150.
 */
const RECORD_WINDOW_MS = 50;

interface Endpoint {
  accountId: string;
  queue: ClaimedDelivery[];
  active: number;
  /** Attempts it may have in flight: the full cap, or one while it is failing. */
  cap: number;
}

interface Account {
  /** Deliveries of its endpoints queued or in flight here. */
  held: number;
  active: number;
}

/**
 * Claims due deliveries (fairly across endpoints and accounts: see `DeliveryStore.claim`) and
 * sends them. At most `concurrency` attempts in flight per process, `accountConcurrency` per
 * account and `perEndpointConcurrency` per endpoint — one while the endpoint is failing — so slow
 * or dead receivers cannot starve the others; claims run ahead by several rounds per endpoint
 * (`prefetchRounds`), queued here under their lease, so the database is asked once per batch
 * rather than once per attempt. A failed attempt hands the endpoint's queue back unsent (no
 * attempt used), and so does its circuit opening; a queued delivery whose lease could no longer
 * cover a whole attempt goes back the same way, so no attempt outlives its lease. Woken by new deliveries, retries and finished
 * attempts; the sweep wakes it too.
 */
@Injectable()
export class Dispatcher {
  private readonly logger = new Logger('Dispatcher');
  private readonly cipher: SecretCipher;
  private readonly openedSecrets = new Map<string, string>();
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly accounts = new Map<string, Account>();
  /** Endpoints whose last attempt here failed, until that is recorded (or one succeeds): claimed one at a time meanwhile. */
  private readonly failing = new Set<string>();
  private readonly attempts = new Set<Promise<void>>();
  private readonly handingBack = new Set<Promise<void>>();
  private held = 0;
  private active = 0;
  private pumping: Promise<void> | null = null;
  private again = false;
  /** The last claim found work: there may be more than it could take. Until one finds none, freed slots claim again. */
  private claimFoundWork = false;
  /** Attempts ended since the last claim began. */
  private freedSinceClaim = 0;
  private stopped = false;
  private unrecorded: { result: { delivery: ClaimedDelivery; outcome: AttemptOutcome }; resolve: () => void }[] = [];
  private recording: Promise<void> | null = null;
  private recordTimer: NodeJS.Timeout | null = null;
  /** When the last recording started (performance.now()). */
  private recordStartedAt = -Infinity;

  constructor(
    private readonly store: DeliveryStore,
    private readonly sender: Sender,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {
    this.cipher = SecretCipher.fromEnv(options.secretKeys);
  }

  get activeAttempts(): number {
    return this.active;
  }

  /**
   * New work may be due (a notification, the sweep, a hand-back), or — `freed` — an attempt of that
   * endpoint ended: then a claim is worth it only while claims find work (new work announces
   * itself), and once half an endpoint's prefetch was freed since the last claim began or the
   * endpoint's queue ran dry — so claims come in batches rather than one per attempt.
   */
  wake(freed?: Endpoint): void {
    if (this.stopped) return;
    if (freed && (!this.claimFoundWork || !this.runningLow(freed))) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump().finally(() => (this.pumping = null));
  }

  /**
   * Stops claiming, hands the claimed-but-unsent deliveries back (no attempt counted, units
   * released) and waits for the attempts in flight to be recorded.
   */
  async drain(): Promise<void> {
    this.stopped = true;
    await this.pumping;
    for (const [id, endpoint] of this.endpoints) this.handBack(id, endpoint);
    if (this.unrecorded.length > 0) this.flush();
    await Promise.all([...this.attempts]);
    await this.recording;
    await Promise.all([...this.handingBack]);
  }

  /** The endpoint's queued deliveries (all, or those given, already taken off its queue) go back to the schedule unsent: no attempt used, units released. */
  private handBack(id: string, endpoint: Endpoint, unsent: ClaimedDelivery[] = endpoint.queue.splice(0)): void {
    if (unsent.length === 0) return;
    this.held -= unsent.length;
    this.release(endpoint.accountId, unsent.length);
    this.forgetIfIdle(id, endpoint);
    const done = this.store.unclaim(unsent).then(
      // Due again: the next claim takes what the endpoint may have now (one at a time if it failed).
      () => this.wake(),
      (error: unknown) => {
        this.logger.warn(`handing back ${unsent.length} claimed deliveries failed; their leases expire: ${errorMessage(error)}`);
      },
    );
    this.handingBack.add(done);
    void done.finally(() => this.handingBack.delete(done));
  }

  private release(accountId: string, n: number): void {
    const account = this.accounts.get(accountId);
    if (!account) return;
    account.held -= n;
    if (account.held <= 0) this.accounts.delete(accountId);
  }

  private forgetIfIdle(id: string, endpoint: Endpoint): void {
    if (endpoint.active === 0 && endpoint.queue.length === 0 && this.endpoints.get(id) === endpoint) this.endpoints.delete(id);
  }

  private runningLow(freed: Endpoint): boolean {
    return freed.queue.length === 0 || this.freedSinceClaim >= (this.options.perEndpointConcurrency * this.options.prefetchRounds) / 2;
  }

  private async pump(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        const room = this.room();
        if (!room) break;
        let claimed: ClaimedDelivery[];
        this.freedSinceClaim = 0;
        try {
          claimed = await this.store.claim(room.total, room.held);
        } catch (error) {
          this.logger.warn(`claiming deliveries failed, retried at the next wake-up: ${errorMessage(error)}`);
          return;
        }
        this.claimFoundWork = claimed.length > 0;
        this.take(claimed);
        if (claimed.length < room.total) break;
      }
    } while (this.again && !this.stopped);
  }

  /** What this worker could take now (none once stopping), and what it holds. */
  room(): { total: number; held: Holdings } | null {
    const total = this.options.concurrency * this.options.prefetchRounds - this.held;
    if (total <= 0 || this.stopped) return null;
    return {
      total,
      held: {
        endpoints: new Map([...this.endpoints].map(([id, e]) => [id, e.queue.length + e.active])),
        accounts: new Map([...this.accounts].map(([id, a]) => [id, a.held])),
        failing: this.failing,
      },
    };
  }

  /** Claimed deliveries (by a claim, or leased by the fan-out) join their endpoints' queues. */
  take(claimed: readonly ClaimedDelivery[]): void {
    for (const delivery of claimed) this.enqueue(delivery);
  }

  private enqueue(delivery: ClaimedDelivery): void {
    let endpoint = this.endpoints.get(delivery.subscriptionId);
    if (!endpoint) {
      endpoint = { accountId: delivery.accountId, queue: [], active: 0, cap: delivery.inFlightCap };
      this.endpoints.set(delivery.subscriptionId, endpoint);
    }
    endpoint.cap = delivery.inFlightCap;
    endpoint.queue.push(delivery);
    this.held += 1;
    const account = this.accounts.get(delivery.accountId) ?? { held: 0, active: 0 };
    account.held += 1;
    this.accounts.set(delivery.accountId, account);
    this.drive(delivery.subscriptionId, endpoint);
  }

  /** Starts what the endpoint's, its account's and the process's caps allow. */
  private drive(id: string, endpoint: Endpoint): void {
    const account = this.accounts.get(endpoint.accountId);
    if (!account) return;
    const expiring: ClaimedDelivery[] = [];
    // An attempt must end (the receiver timeout) with its lease still held.
    const leaseNeeded = Date.now() + this.options.receiverTimeoutMs + LEASE_MARGIN_MS;
    while (
      endpoint.queue.length > 0 &&
      endpoint.active < endpoint.cap &&
      account.active < this.options.accountConcurrency &&
      this.active < this.options.concurrency
    ) {
      const delivery = endpoint.queue.shift()!;
      if (delivery.leaseExpiresAt < leaseNeeded) {
        expiring.push(delivery);
        continue;
      }
      endpoint.active += 1;
      account.active += 1;
      this.active += 1;
      // The slot is free once the receiver has answered; the outcome is recorded with the next batch.
      const attempt = this.attempt(delivery).then((outcome) => {
        if (outcome) countAttempt(outcome);
        endpoint.active -= 1;
        account.active -= 1;
        this.active -= 1;
        this.held -= 1;
        this.release(endpoint.accountId, 1);
        // A failing endpoint gets one attempt at a time (what it had queued goes back unsent); a
        // success gives it the full cap again.
        if (outcome && !outcome.succeeded) {
          endpoint.cap = 1;
          this.failing.add(id);
          this.handBack(id, endpoint);
        } else if (outcome) {
          endpoint.cap = this.options.perEndpointConcurrency;
          this.failing.delete(id);
        }
        this.forgetIfIdle(id, endpoint);
        // This endpoint first, then any other waiting on the process or account cap.
        this.drive(id, endpoint);
        for (const [otherId, other] of this.endpoints) if (other.queue.length > 0) this.drive(otherId, other);
        this.freedSinceClaim += 1;
        this.wake(endpoint);
        return outcome ? this.recordSoon({ delivery, outcome }) : undefined;
      }).catch((error: unknown) => this.logger.error(`delivery ${delivery.id}: ${errorMessage(error)}`));
      this.attempts.add(attempt);
      void attempt.finally(() => this.attempts.delete(attempt));
    }
    this.handBack(id, endpoint, expiring);
  }

  /**
   * An endpoint's signing secret, decrypted once and kept while it is among the last
   * `OPENED_SECRETS` used: every attempt of a busy endpoint would otherwise decrypt it again.
   * Keyed by the sealed form, so a rotated or re-encrypted secret is a new entry.
   */
  private opened(sealed: { ciphertext: string; keyId: string }): string {
    const key = `${sealed.keyId}:${sealed.ciphertext}`;
    let secret = this.openedSecrets.get(key);
    if (secret === undefined) {
      secret = this.cipher.decrypt(sealed.ciphertext, sealed.keyId);
      if (this.openedSecrets.size >= OPENED_SECRETS) this.openedSecrets.delete(this.openedSecrets.keys().next().value!);
    } else {
      this.openedSecrets.delete(key);
    }
    this.openedSecrets.set(key, secret);
    return secret;
  }

  /** Signs and sends one attempt; null when it could not be signed. */
  private async attempt(delivery: ClaimedDelivery): Promise<AttemptOutcome | null> {
    try {
      const secrets = [this.opened(delivery.secret)];
      if (delivery.previousSecret) secrets.push(this.opened(delivery.previousSecret));
      const headers = webhookHeaders({ msgId: delivery.eventId, timestamp: new Date(), body: delivery.payload, secrets });
      return await this.sender.send(delivery.url, { ...headers }, delivery.payload);
    } catch (error) {
      // Signing failed (a master key missing from WEBHOOK_SECRET_KEY): the lease runs out and the
      // sweep counts the attempt as interrupted, with the unit released — nothing is lost.
      this.logger.error(`delivery ${delivery.id} could not be signed: ${errorMessage(error)}`);
      return null;
    }
  }

  /**
   * Outcomes are recorded in batches: one transaction at a time per process, taking everything
   * that finished meanwhile (one commit, one ledger update per account, one health update per
   * endpoint for many attempts). An attempt counts as done once its batch has committed.
   */
  private recordSoon(result: { delivery: ClaimedDelivery; outcome: AttemptOutcome }): Promise<void> {
    return new Promise((resolve) => {
      this.unrecorded.push({ result, resolve });
      if (this.stopped || this.unrecorded.length >= RECORD_BATCH) this.flush();
      // While a recording runs, its end schedules the next.
      else if (!this.recording) this.recordTimer ??= setTimeout(() => this.flush(), RECORD_WINDOW_MS);
    });
  }

  /** After a recording: the next one now if a whole batch waits (or stopping), else once `RECORD_WINDOW_MS` has passed since this one started. */
  private recordNext(): void {
    if (this.unrecorded.length === 0) return;
    const wait = this.recordStartedAt + RECORD_WINDOW_MS - performance.now();
    if (this.stopped || this.unrecorded.length >= RECORD_BATCH || wait <= 0) this.flush();
    else this.recordTimer ??= setTimeout(() => this.flush(), Math.ceil(wait));
  }

  private flush(): void {
    if (this.recordTimer) {
      clearTimeout(this.recordTimer);
      this.recordTimer = null;
    }
    if (this.recording || this.unrecorded.length === 0) return;
    this.recordStartedAt = performance.now();
    this.recording = (async () => {
      const batch = this.unrecorded.splice(0, RECORD_BATCH);
      try {
        const { openCircuits } = await this.store.record(batch.map((entry) => entry.result));
        // Recorded: the endpoint's row says it is failing now, for every worker's claims.
        for (const { result } of batch) if (!result.outcome.succeeded) this.failing.delete(result.delivery.subscriptionId);
        for (const id of openCircuits) {
          const endpoint = this.endpoints.get(id);
          if (endpoint) this.handBack(id, endpoint);
        }
      } catch (error) {
        // Still `sending` with their leases: the sweep counts them as interrupted and retries them.
        this.logger.warn(`recording ${batch.length} attempt(s) failed; their lease expiry retries them: ${errorMessage(error)}`);
      }
      for (const entry of batch) entry.resolve();
    })().finally(() => {
      this.recording = null;
      this.recordNext();
    });
  }
}
