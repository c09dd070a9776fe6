import { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '@cars/runtime';
import { generateMasterKey } from '@cars/signing';
import { log, sleep } from '../../common/infra';
import { AppName, Exit, isRunning, spawnApp, statusOf, stopProcess, waitForReady } from '../../common/processes';
import { state } from '../cleanup';
import { API_RATE, READY_TIMEOUT_MS, REDIS_URL, REQUEST_TIMEOUT_MS, SLOT_LABELS, SlotLabel, STOP_TIMEOUT_MS } from '../options';
import { Drill } from './prepare';

export interface Slot {
  label: SlotLabel;
  app: AppName;
  child: ChildProcess | null;
  /** The gateway's HTTP port, or the app's health port. */
  port: number;
  generation: number;
  /** Gateways: the load balancer sends to it. */
  inRotation: boolean;
  /** Gateways: a fault has it out of the rotation; the health check must not put it back. */
  held: boolean;
}

export interface Answer {
  status: number | null;
  outcome: string;
  body: string;
  slot: Slot | null;
}

export const readyUrl = (port: number) => `http://127.0.0.1:${port}/health/ready`;

/**
 * The six apps as processes, one slot each (two for the gateway), restarted like a Deployment when
 * one exits by itself; and the load balancer in front of the gateways: round robin over the
 * gateways in the rotation. A connection-level error takes a gateway out (as a failing readiness
 * probe would); the health check puts it back once ready, unless a fault holds it out.
 */
export class Stack {
  readonly slots: Slot[] = SLOT_LABELS.map((label) => ({
    label,
    app: (label.startsWith('gateway') ? 'gateway' : label) as AppName,
    child: null,
    port: 0,
    generation: 0,
    inRotation: false,
    held: false,
  }));
  /** Processes the drill stops on purpose; any other exit is a crash. */
  readonly intended = new WeakSet<ChildProcess>();
  readonly crashes: string[] = [];
  readonly sigtermExits: { label: string; exit: Exit }[] = [];
  private readonly common: Record<string, string>;
  private readonly perApp: Record<AppName, Record<string, string>>;
  private turn = 0;
  private healthChecking = true;
  private healthCheck: Promise<void> = Promise.resolve();

  constructor(private readonly drill: Drill) {
    this.common = {
      DATABASE_URL: drill.databaseUrl,
      RABBITMQ_URL: drill.rabbitUrl,
      WEBHOOK_SECRET_KEY: generateMasterKey(),
      WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
      LOG_LEVEL: 'warn',
      DATABASE_POOL_SIZE: '4',
    };
    this.perApp = {
      gateway: {
        HOST: '127.0.0.1',
        REDIS_URL,
        REDIS_KEY_PREFIX: `cars-chaos-${drill.id}:`,
        BURST_RATE_PER_SECOND: String(Math.max(100, API_RATE * 4)),
        BURST_CAPACITY: String(Math.max(1000, API_RATE * 20)),
        // The drill's API load is one account at API_RATE: on a slower machine more than the
        // default 4 of its requests are in flight at once, and the per-account cap (a guard
        // against one tenant's expensive queries) would refuse the drill outside any fault.
        GATEWAY_MAX_IN_FLIGHT_PER_ACCOUNT: String(Math.max(64, API_RATE)),
        METERING_POOL_SIZE: '4',
      },
      query: drill.readDatabaseUrl ? { READ_DATABASE_URL: drill.readDatabaseUrl } : {},
      stats: drill.readDatabaseUrl ? { READ_DATABASE_URL: drill.readDatabaseUrl } : {},
      webhooks: {},
      'change-detector': {},
      'delivery-worker': {
        DATABASE_POOL_SIZE: '6',
        DELIVERY_RETRY_DELAYS_MS: '200,400,800,1600,3200',
        DELIVERY_SWEEP_INTERVAL_MS: '200',
        DELIVERY_RECEIVER_TIMEOUT_MS: '2000',
        DELIVERY_LEASE_MS: '15000',
      },
    };
  }

  slotOf(label: SlotLabel): Slot {
    return this.slots.find((s) => s.label === label)!;
  }

  get gateways(): Slot[] {
    return this.slots.filter((s) => s.app === 'gateway');
  }

  /** Every slot's first process, ready; the gateways in the rotation; the health check running. */
  async start(): Promise<void> {
    log('starting the apps (two gateway replicas)');
    const first = await Promise.all(this.slots.map((slot) => this.launchReady(slot)));
    first.forEach((next, i) => {
      if (!next) throw new Error(`${this.slots[i].label} did not become ready (log: ${this.drill.logDir})`);
      this.slots[i].child = next.child;
      this.slots[i].port = next.port;
      if (this.slots[i].app === 'gateway') this.slots[i].inRotation = true;
    });
    this.healthCheck = this.checkHealth();
  }

  private async launch(slot: Slot, env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number }> {
    const port = await freePort();
    slot.generation += 1;
    const portEnv: Record<string, string> = slot.app === 'gateway' ? { PORT: String(port) } : { HEALTH_PORT: String(port) };
    const child = spawnApp(slot.app, { ...this.common, ...this.perApp[slot.app], ...env, ...portEnv }, join(this.drill.logDir, `${slot.label}.${slot.generation}.log`));
    state.children.add(child);
    // Like a Deployment: a process that exits by itself is counted and started again.
    child.once('exit', (code, signal) => {
      state.children.delete(child);
      if (state.finishing || this.intended.has(child)) return;
      this.crashes.push(`${slot.label} (${signal ?? `code ${code}`})`);
      log(`${slot.label} exited by itself (${signal ?? `code ${code}`}); starting it again`);
      if (slot.child !== child) return;
      slot.child = null;
      slot.inRotation = false;
      void this.launch(slot).then((next) => {
        slot.child = next.child;
        slot.port = next.port;
      });
    });
    return { child, port };
  }

  /** Starts the slot's next process (`env` on top of its settings) and waits until it is ready (null when it is not). */
  async launchReady(slot: Slot, env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number } | null> {
    const next = await this.launch(slot, env);
    if (await waitForReady(readyUrl(next.port), next.child, READY_TIMEOUT_MS)) return next;
    this.intended.add(next.child);
    await stopProcess(next.child, 'SIGKILL', 5000);
    return null;
  }

  /** SIGTERM on purpose, the exit recorded and noted. */
  async terminate(slot: Slot, child: ChildProcess, notes: string[]): Promise<void> {
    this.intended.add(child);
    const exit = await stopProcess(child, 'SIGTERM', STOP_TIMEOUT_MS);
    this.sigtermExits.push({ label: slot.label, exit });
    notes.push(exit.forced ? `old process killed after ${STOP_TIMEOUT_MS / 1000} s` : `old process exited ${exit.signal ?? `code ${exit.code}`} in ${(exit.ms / 1000).toFixed(1)} s`);
  }

  /** A ready replacement in the slot, up to three attempts. */
  async replace(slot: Slot, notes: string[]): Promise<boolean> {
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const next = await this.launchReady(slot);
      if (next) {
        slot.child = next.child;
        slot.port = next.port;
        return true;
      }
      notes.push(`replacement #${attempt} did not become ready`);
    }
    return false;
  }

  private pick(): Slot | null {
    // The balancer knows only its rotation, not whether the process behind an entry still lives.
    const ready = this.slots.filter((s) => s.app === 'gateway' && s.inRotation && s.child);
    return ready.length === 0 ? null : ready[this.turn++ % ready.length];
  }

  private async checkHealth(): Promise<void> {
    while (this.healthChecking) {
      for (const slot of this.slots) {
        if (slot.app !== 'gateway' || slot.inRotation || slot.held || !isRunning(slot.child)) continue;
        if ((await statusOf(readyUrl(slot.port))) === 200) {
          slot.inRotation = true;
          log(`${slot.label} is back in the rotation`);
        }
      }
      await sleep(500);
    }
  }

  /** One request through the load balancer. */
  async send(path: string, key: string | null, init: RequestInit = {}): Promise<Answer> {
    const slot = this.pick();
    if (!slot) return { status: null, outcome: 'no gateway in rotation', body: '', slot };
    const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
    if (key) headers.authorization = `Bearer ${key}`;
    try {
      const res = await fetch(`http://127.0.0.1:${slot.port}${path}`, { ...init, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      const body = await res.text();
      return { status: res.status, outcome: res.status === 200 ? '200' : `HTTP ${res.status}`, body, slot };
    } catch (error) {
      const e = error as { name?: string; cause?: { code?: string; name?: string; message?: string } };
      if (e.name === 'TimeoutError' || e.name === 'AbortError') return { status: null, outcome: 'timeout', body: '', slot };
      const code = e.cause?.code ?? e.cause?.name ?? e.name ?? 'error';
      if (slot.inRotation) {
        slot.inRotation = false;
        log(`${slot.label} out of the rotation after a connection error (${code})`);
      }
      return { status: null, outcome: `connection error (${code})`, body: '', slot };
    }
  }

  /** The health check ends; every app gets SIGTERM (the drill is finishing: no exit is a crash). */
  async stop(): Promise<void> {
    this.healthChecking = false;
    await this.healthCheck;
    state.finishing = true;
    await Promise.all(this.slots.filter((s) => isRunning(s.child)).map((s) => stopProcess(s.child!, 'SIGTERM', STOP_TIMEOUT_MS)));
  }
}
