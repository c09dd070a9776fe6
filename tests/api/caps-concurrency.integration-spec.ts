import { randomUUID } from 'node:crypto';
import { createApiKey } from '@cars/accounts';
import { Queues } from '@cars/contracts';
import { caseResolver, PUBLIC_DESTINATIONS } from '@cars/net-guard/testing';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { accountAreaModule, ConsoleClient, OpenApiConformance } from './support/account-area';
import { createTestAccount } from './support/accounts';
import { startTestStack, TestStack, testWebhooksModule } from './support/stack';
import { WebhooksApi } from './support/webhooks-api';

jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/caps';
const resolver = caseResolver([...PUBLIC_DESTINATIONS, { url: HOOK, resolvesTo: ['93.184.215.14'], why: 'the caps spec’s receiver' }]);

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
    for (let i = 0; i < 19; i += 1) await createApiKey(db, accountId);

    const answers = await Promise.all(Array.from({ length: 20 }, () => browser.post('/account/keys')));
    expect(statuses(answers)).toEqual([201, ...Array<number>(19).fill(409)]);
    expect(answers.find((a) => a.status === 409)!.body).toEqual({
      error: 'Conflict',
      message: 'An account can have at most 20 active API keys: revoke one first',
    });
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
