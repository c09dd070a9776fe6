import type { ServerResponse } from 'node:http';
import type { ApiPrincipal } from '../http/request-context';
import { countsAsUsage, MeterTicket, ticketHeaders, UsageMeter } from '../metering/usage-meter';

/**
 * The monthly allowance of one `POST /mcp`: each counted tool call in it reserves a unit, and
 * every unit is settled when the HTTP response closes — committed if the call's outcome counts
 * (as the REST route's status would: 2xx or 404) and the response was delivered, released
 * otherwise (invalid input, 403, 429, 5xx, client gone). The same rules as a REST route's unit (`RequestAdmission`),
 * per tool call instead of per HTTP response, since one response carries every call's result.
 */
export class McpRequestUsage {
  private readonly held: { ticket: MeterTicket; status: number }[] = [];
  private closed = false;

  constructor(
    private readonly meter: UsageMeter,
    private readonly response: ServerResponse,
  ) {
    if (response.destroyed) this.closed = true;
    else response.once('close', () => this.close());
  }

  /** One unit for a counted call, or the 429 of an exhausted allowance (503 if the ledger is down). */
  reserve(principal: ApiPrincipal, now: Date): MeterTicket | Promise<MeterTicket> {
    return this.meter.reserve(principal, now);
  }

  /**
   * Records the call's outcome (the REST status it stands for). The response's X-RateLimit-*
   * headers show the allowance after it, as on a REST response, if they are not sent yet.
   */
  settle(ticket: MeterTicket, status: number): void {
    if (this.closed) return this.meter.settle(ticket, false);
    this.held.push({ ticket, status });
    if (this.response.headersSent) return;
    for (const [name, value] of Object.entries(ticketHeaders(ticket, status))) this.response.setHeader(name, value);
  }

  private close(): void {
    this.closed = true;
    const delivered = this.response.writableFinished;
    for (const { ticket, status } of this.held.splice(0)) this.meter.settle(ticket, delivered && countsAsUsage(status));
  }
}
