import { ArgumentsHost, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { PLANS } from '@cars/accounts';
import { ErrorBody, QueryPatterns, rpcError, rpcOk, StatsPatterns } from '@cars/contracts';
import { ServiceClient, ServiceUnavailableError } from '@cars/messaging';
import type { ApiPrincipal } from '../http/request-context';
import { monthlyLimitExceeded } from '../metering/admission.errors';
import { ErrorEnvelopeFilter } from '../http/error.filter';
import { ApiAccessConfig } from '../metering/api-access.config';
import { MeterTicket } from '../metering/usage-meter';
import { AuctionsController } from '../auctions/auctions.controller';
import { MakesController } from '../makes/makes.controller';
import { StatsController } from '../stats/stats.controller';
import { McpRequestUsage } from './mcp-usage';
import { McpCaller, McpService } from './mcp.service';

const NOW = new Date('2026-11-25T12:00:00Z');
const TICKET = { reservation: { accountId: 'a1', units: 1 } } as unknown as MeterTicket;
const PAGE = '{"data":[],"meta":{"total":0,"page":1,"limit":1,"total_pages":0,"has_more":false,"next_cursor":null}}';

function principal(plan: ApiPrincipal['plan']): ApiPrincipal {
  return { keyId: 'k1', accountId: 'a1', plan, planExpiresAt: null, emailVerified: true };
}

describe('McpService', () => {
  let query: { send: jest.Mock };
  let stats: { send: jest.Mock };
  let usage: { reserve: jest.Mock; settle: jest.Mock };
  let service: McpService;

  const caller = (plan: ApiPrincipal['plan'] | null = '1k'): McpCaller => ({
    principal: plan === null ? undefined : principal(plan),
    usage: usage as unknown as McpRequestUsage,
  });

  beforeAll(() => Logger.overrideLogger(false));

  beforeEach(() => {
    query = { send: jest.fn() };
    stats = { send: jest.fn() };
    usage = { reserve: jest.fn().mockResolvedValue(TICKET), settle: jest.fn() };
    const config = { enabled: true, now: () => NOW } as ApiAccessConfig;
    service = new McpService(query as unknown as ServiceClient, stats as unknown as ServiceClient, new Reflector(), config);
  });

  it("reads each tool's rules from its REST route's decorators", () => {
    expect(service.rulesOf({ controller: AuctionsController, handler: 'search' })).toEqual({ metered: true, paidPlan: undefined });
    expect(service.rulesOf({ controller: MakesController, handler: 'listMakes' })).toEqual({ metered: false, paidPlan: undefined });
    expect(service.rulesOf({ controller: StatsController, handler: 'getStats' })).toEqual({
      metered: true,
      paidPlan: { feature: 'Pricing statistics', verifiedEmail: false },
    });
  });

  it('answers a counted call through the REST call, with the body, its JSON text and a summary; the unit counts', async () => {
    query.send.mockResolvedValue(rpcOk(PAGE));
    const result = await service.callTool('search_auctions', { make: 'Porsche', limit: 1 }, caller());
    expect(query.send).toHaveBeenCalledWith(QueryPatterns.SearchAuctions, { make: 'Porsche', limit: 1 });
    expect(usage.reserve).toHaveBeenCalledWith(principal('1k'), NOW);
    expect(usage.settle).toHaveBeenCalledWith(TICKET, 200);
    expect(result).toEqual({
      content: [
        { type: 'text', text: '0 completed auctions (none match).' },
        { type: 'text', text: PAGE },
      ],
      structuredContent: JSON.parse(PAGE),
    });
  });

  it('does not reserve for free tools, for invalid arguments, or with metering off', async () => {
    query.send.mockResolvedValue(rpcOk({ data: ['Porsche'] }));
    expect((await service.callTool('list_makes', {}, caller())).isError).toBeUndefined();
    const invalid = await service.callTool('search_auctions', { limit: 0 }, caller());
    expect(invalid).toMatchObject({
      isError: true,
      structuredContent: { error: 'Validation Error', message: 'Invalid parameter: limit', details: { limit: ['limit must be an integer from 1 to 100'] } },
    });
    expect(invalid.content[0]).toEqual({ type: 'text', text: 'Validation Error: Invalid parameter: limit — limit: limit must be an integer from 1 to 100.' });
    query.send.mockResolvedValue(rpcOk(PAGE));
    expect((await service.callTool('search_auctions', {}, caller(null))).isError).toBeUndefined();
    expect(usage.reserve).not.toHaveBeenCalled();
    expect(usage.settle).not.toHaveBeenCalled();
  });

  it('refuses get_price_stats on Free before anything else', async () => {
    const result = await service.callTool('get_price_stats', { colour: 'red' }, caller('free'));
    expect(result.structuredContent).toEqual({
      error: 'Forbidden',
      message: 'Pricing statistics requires an active paid plan (1K, 10K or 100K); this account is on the Free plan',
    });
    expect(usage.reserve).not.toHaveBeenCalled();
    expect(stats.send).not.toHaveBeenCalled();
  });

  it('answers an exhausted allowance with the REST 429 body, without calling the service', async () => {
    const limit = monthlyLimitExceeded(PLANS['1k'], {});
    usage.reserve.mockRejectedValue(limit);
    const result = await service.callTool('get_price_stats', { make: 'Porsche' }, caller());
    expect(result).toMatchObject({ isError: true, structuredContent: limit.body });
    expect(stats.send).not.toHaveBeenCalled();
    expect(usage.settle).not.toHaveBeenCalled();
  });

  it("settles the unit with the status the REST route would answer: a 404 counts, the service's 400 does not", async () => {
    const notFound: ErrorBody = { error: 'Not Found', message: 'No auction has the id 7' };
    query.send.mockResolvedValue(rpcError(404, notFound));
    expect((await service.callTool('get_auction_bids', { auction_id: 7 }, caller())).structuredContent).toEqual(notFound);
    expect(query.send).toHaveBeenCalledWith(QueryPatterns.ListBids, { auction_id: '7' });
    expect(usage.settle).toHaveBeenLastCalledWith(TICKET, 404);

    const unknownMake: ErrorBody = { error: 'Validation Error', message: 'Invalid parameter: make', details: { make: ['unknown make'] } };
    stats.send.mockResolvedValue(rpcError(400, unknownMake));
    expect((await service.callTool('get_price_stats', { make: 'Moskvitch' }, caller())).structuredContent).toEqual(unknownMake);
    expect(stats.send).toHaveBeenCalledWith(StatsPatterns.GetPriceStats, { make: 'Moskvitch' });
    expect(usage.settle).toHaveBeenLastCalledWith(TICKET, 400);
  });

  it('answers a service that is down with the body the error filter gives REST, uncounted', async () => {
    const down = new ServiceUnavailableError('query', new Error('timeout'));
    query.send.mockRejectedValue(down);
    const result = await service.callTool('list_live_auctions', {}, caller());
    let restBody: unknown;
    const reply = { status: () => reply, headers: () => reply, type: () => reply, send: (body: unknown) => (restBody = body) };
    const host = { switchToHttp: () => ({ getResponse: () => reply, getRequest: () => ({ method: 'GET', url: '/auctions/live' }) }) };
    new ErrorEnvelopeFilter().catch(down, host as unknown as ArgumentsHost);
    expect(result).toMatchObject({ isError: true, structuredContent: restBody });
    expect(usage.settle).toHaveBeenCalledWith(TICKET, 503);
  });

  it('answers an unknown tool with a protocol error', async () => {
    await expect(service.callTool('drop_tables', {}, caller())).rejects.toBeInstanceOf(McpError);
  });
});
