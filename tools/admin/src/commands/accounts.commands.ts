import {
  accountJson,
  AccountRecord,
  AccountsInputError,
  createAccount,
  createApiKey,
  describeAccount,
  parsePlan,
  revokeApiKey,
  setPlan,
  setUsage,
  verifyEmail,
} from '@cars/accounts';
import { pgPoolOf } from '@cars/persistence';
import { AdminCommand, Flags, requireFlag, UsageError } from '../command';

/** Accounts, plans, usage and API keys (docs/operations.md, "Operator CLI"). Keys are printed once and never stored. */

function plan(flags: Flags) {
  return parsePlan(requireFlag(flags, 'plan'));
}

function optionalDate(flags: Flags, name: string): Date | null {
  const value = flags[name];
  if (value === undefined) return null;
  const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (!/^\d{4}-\d{2}-\d{2}/.test(String(value)) || Number.isNaN(date.getTime())) {
    throw new UsageError(`--${name} must be an ISO 8601 date or timestamp (got "${String(value)}")`);
  }
  return date;
}

function nonNegativeInteger(flags: Flags, name: string): number {
  const value = requireFlag(flags, name);
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer (got "${value}")`);
  return Number(value);
}

/**
 * The account as the API shows it (`accountJson`), its id under the CLI's documented name
 * `account_id` (docs/api/accounts.md), as in every other command's output.
 */
export function accountOutput(account: AccountRecord) {
  const { id, ...fields } = accountJson(account);
  return { account_id: id, ...fields };
}

const commands: AdminCommand[] = [
  {
    name: 'accounts:create',
    usage: 'accounts:create --email E --plan free|1k|10k|100k [--verified]',
    async run({ flags, db }) {
      const email = requireFlag(flags, 'email');
      const chosen = plan(flags);
      if (flags.verified !== undefined && flags.verified !== true) throw new UsageError('--verified takes no value');
      const { account, key } = await createAccount(pgPoolOf(await db()), { email, plan: chosen, emailVerified: flags.verified === true });
      return { account_id: account.id, api_key: key.apiKey };
    },
  },
  {
    name: 'accounts:set-plan',
    usage: 'accounts:set-plan --account ID --plan free|1k|10k|100k [--expires-at ISO]',
    async run({ flags, db }) {
      const accountId = requireFlag(flags, 'account');
      const chosen = plan(flags);
      const planExpiresAt = optionalDate(flags, 'expires-at');
      return accountOutput(await setPlan(pgPoolOf(await db()), { accountId, plan: chosen, planExpiresAt }));
    },
  },
  {
    name: 'accounts:verify-email',
    usage: 'accounts:verify-email --account ID',
    async run({ flags, db }) {
      return accountOutput(await verifyEmail(pgPoolOf(await db()), requireFlag(flags, 'account')));
    },
  },
  {
    name: 'accounts:show',
    usage: 'accounts:show --account ID',
    async run({ flags, db }) {
      const summary = await describeAccount(pgPoolOf(await db()), requireFlag(flags, 'account'));
      return {
        ...accountOutput(summary.account),
        effective_plan: summary.effectivePlan,
        usage: {
          period: summary.usage.period,
          used: summary.usage.used,
          reserved: summary.usage.reserved,
          limit: summary.usage.limit,
          resets_at: summary.usage.periodEnd.toISOString(),
        },
      };
    },
  },
  {
    name: 'usage:set',
    usage: 'usage:set --account ID --used N',
    async run({ flags, db }) {
      const accountId = requireFlag(flags, 'account');
      const usage = await setUsage(pgPoolOf(await db()), accountId, nonNegativeInteger(flags, 'used'));
      return { account_id: usage.accountId, period: usage.period, used: usage.used, reserved: usage.reserved };
    },
  },
  {
    name: 'keys:create',
    usage: 'keys:create --account ID',
    async run({ flags, db }) {
      const key = await createApiKey(pgPoolOf(await db()), requireFlag(flags, 'account'));
      return { account_id: key.accountId, key_prefix: key.prefix, api_key: key.apiKey };
    },
  },
  {
    name: 'keys:revoke',
    usage: 'keys:revoke --key-prefix P',
    async run({ flags, db }) {
      const record = await revokeApiKey(pgPoolOf(await db()), requireFlag(flags, 'key-prefix'));
      return { key_prefix: record.prefix, account_id: record.accountId, revoked_at: record.revokedAt?.toISOString() ?? null };
    },
  },
];

/** Malformed input found by the accounts lib (not a UUID, bad email…) is a usage error too (exit 2). */
export const accountsCommands: AdminCommand[] = commands.map((command) => ({
  ...command,
  async run(context) {
    try {
      return await command.run(context);
    } catch (error) {
      if (error instanceof AccountsInputError) throw new UsageError(error.message);
      throw error;
    }
  },
}));
