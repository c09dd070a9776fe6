import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { createApiKey } from '@cars/accounts';
import { Queues } from '@cars/contracts';
import { caseResolver, PUBLIC_DESTINATIONS } from '@cars/net-guard/testing';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { accountAreaModule, ConsoleClient, OpenApiConformance } from './support/account-area';
import { createTestAccount } from './support/accounts';
import { startTestStack, TestStack, testWebhooksModule } from './support/stack';
import { WebhooksApi } from './support/webhooks-api';
import { pgPoolOf } from '@cars/persistence';

jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/caps';
const resolver = caseResolver([...PUBLIC_DESTINATIONS, { url: HOOK, resolvesTo: ['93.184.215.14'], why: 'the caps spec’s receiver' }]);

/** One request over `agent` (its pooled connections), the body parsed. */
function sendOver(base: string, agent: Agent, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, agent, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

const statuses = (answers: { status: number }[]) => answers.map((a) => a.status).sort((a, b) => a - b);

/**
 * Caps that hold when the requests that would pass them arrive together: the 20 active API keys
 * of an account and the webhook endpoint allowance of its plan are checked and taken under the
 * account's row lock, so concurrent creations take turns.
 */
describe('caps under concurrency', () => {
  let stack: TestStack;
  let db: DataSource;
  let conformance: OpenApiConformance;
  let webhooks: WebhooksApi;
  const send = (agent: Agent, method: string, path: string, headers: Record<string, string>) => sendOver(stack.url, agent, method, path, headers);

  beforeAll(async () => {
    db = await openTestDataSource();
    stack = await startTestStack({
      services: [{ queue: Queues.WebhooksRpc, module: testWebhooksModule({ resolver }) }],
      access: { burstCapacity: 100_000, burstRatePerSecond: 100_000 },
      gatewayImports: [accountAreaModule()],
    });
    conformance = await OpenApiConformance.load(stack.url);
    webhooks = await WebhooksApi.open(stack.url);
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
  });

  it('20 concurrent key creations for an account with 19 active keys: exactly one 201, and 20 active keys', async () => {
    const browser = new ConsoleClient(stack.url, conformance);
    const signedUp = await browser.signUp(`caps-${randomUUID()}@example.test`);
    expect(signedUp.status).toBe(201);
    const accountId: string = signedUp.body.account.id;
    for (let i = 0; i < 19; i += 1) await createApiKey(pgPoolOf(db), accountId);

    // Twenty connections open and warm first, so that the twenty creations arrive together.
    const agent = new Agent({ keepAlive: true, maxSockets: 20 });
    const session = { cookie: `cars_session=${browser.cookie}`, 'x-csrf-token': browser.csrf! };
    try {
      await Promise.all(Array.from({ length: 20 }, () => send(agent, 'GET', '/account/session', session)));
      const answers = await Promise.all(Array.from({ length: 20 }, () => send(agent, 'POST', '/account/keys', session)));
      expect(statuses(answers)).toEqual([201, ...Array<number>(19).fill(409)]);
      expect(answers.find((a) => a.status === 409)!.body).toEqual({
      error: 'Conflict',
        message: 'An account can have at most 20 active API keys: revoke one first',
      });
    } finally {
      agent.destroy();
    }
    const [{ active }] = await db.query(`SELECT count(*)::int AS active FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`, [accountId]);
    expect(active).toBe(20);
  });

  it.each([
    ['1k', 1, 8],
    ['10k', 10, 20],
  ] as const)('concurrent endpoint creations on the %s plan: exactly the allowance (%i) is created', async (plan, allowance, attempts) => {
    const account = await createTestAccount(db, { plan });
    const answers = await Promise.all(
      Array.from({ length: attempts }, () => webhooks.post(account.apiKey, '/webhooks', { url: HOOK, event_types: ['auction.ended'] })),
    );
    expect(statuses(answers)).toEqual([...Array<number>(allowance).fill(201), ...Array<number>(attempts - allowance).fill(409)]);
    const [{ endpoints }] = await db.query(`SELECT count(*)::int AS endpoints FROM webhook_subscriptions WHERE account_id = $1`, [account.accountId]);
    expect(endpoints).toBe(allowance);
  });
});
