import { Inject, Injectable } from '@nestjs/common';
import {
  accountJson,
  AccountRecord,
  AccountsConflictError,
  AccountsNotFoundError,
  AccountsRepository,
  ApiKeyListing,
  ApiKeysRepository,
  billingPeriod,
  createApiKey,
  CredentialsRepository,
  EmailVerificationsRepository,
  effectivePlan,
  getDailyUsage,
  getUsageBreakdown,
  hashOpaqueToken,
  hashPassword,
  isWellFormedOpaqueToken,
  newOpaqueToken,
  needsRehash,
  registerAccount,
  replacePassword,
  revokeApiKeyOfAccount,
  useEmailVerificationToken,
  verifyAgainstDummy,
  verifyPassword,
} from '@cars/accounts';
import { ErrorNames } from '@cars/contracts';
import { PG_POOL } from '@cars/persistence';
import type { Pool } from 'pg';
import { ApiException } from '../http/api-exception';
import { ACCOUNT_AREA_CONFIG, AccountAreaConfig } from './account-area.config';
import { AccountOverviewResponseDto, ApiKeyCreatedResponseDto, ApiKeyDto } from './dto/account.dto';

/** At most this many unrevoked keys per account (the console creates them one click at a time). */
export const MAX_ACTIVE_KEYS = 20;

const WRONG_CREDENTIALS = 'The email address or password is wrong';

function unauthorized(message: string): ApiException {
  return new ApiException(401, { error: ErrorNames.Unauthorized, message });
}

function badRequest(message: string): ApiException {
  return new ApiException(400, { error: 'Bad Request', message });
}

function keyJson(key: ApiKeyListing): ApiKeyDto {
  return {
    id: key.id,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

/**
 * The account area's logic: sign-up, sign-in, email verification, password change, the overview
 * and API keys. Sessions are `AccountSessions`; limits `SignInLimits`; SQL the repositories of
 * `@cars/accounts`; keys are made and revoked by the same functions as the admin CLI's.
 */
@Injectable()
export class AccountAreaService {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly accounts: AccountsRepository,
    private readonly credentials: CredentialsRepository,
    private readonly verifications: EmailVerificationsRepository,
    private readonly keys: ApiKeysRepository,
    @Inject(ACCOUNT_AREA_CONFIG) private readonly config: AccountAreaConfig,
  ) {}

  async signUp(email: string, password: string): Promise<AccountRecord> {
    const passwordHash = await hashPassword(password, this.config.passwordHash);
    try {
      return await registerAccount(this.pool, { email: email.trim(), passwordHash });
    } catch (error) {
      if (error instanceof AccountsConflictError) {
        throw new ApiException(409, { error: ErrorNames.Conflict, message: 'An account with this email address already exists: sign in instead' });
      }
      throw error;
    }
  }

  /** The account, or 401 with one message for an unknown email and a wrong password alike (same time too). */
  async signIn(email: string, password: string): Promise<AccountRecord> {
    const found = await this.credentials.findByEmail(email.trim());
    if (!found) {
      await verifyAgainstDummy(password, this.config.passwordHash);
      throw unauthorized(WRONG_CREDENTIALS);
    }
    if (!(await verifyPassword(password, found.passwordHash))) throw unauthorized(WRONG_CREDENTIALS);
    if (needsRehash(found.passwordHash, this.config.passwordHash)) {
      await this.credentials.updateHash(found.account.id, await hashPassword(password, this.config.passwordHash));
    }
    return found.account;
  }

  async account(accountId: string): Promise<AccountRecord> {
    const account = await this.accounts.find(accountId);
    if (!account) throw unauthorized('The account of this session no longer exists');
    return account;
  }

  /** A new single-use verification token for the account's current address; the link to mail. */
  async newVerificationLink(account: AccountRecord, origin: string): Promise<{ link: string; expiresAt: Date }> {
    const { token, tokenHash } = newOpaqueToken();
    const expiresAt = await this.verifications.insert({
      accountId: account.id,
      email: account.email,
      tokenHash,
      now: this.config.now(),
      ttlMs: this.config.verificationTtlMs,
    });
    const base = this.config.publicBaseUrl ?? origin;
    return { link: `${base}/console/verify?token=${encodeURIComponent(token)}`, expiresAt };
  }

  /** Uses a verification token; 400 `Bad Request` saying whether it is unknown, used or expired. */
  async verifyEmail(token: string): Promise<AccountRecord> {
    if (!isWellFormedOpaqueToken(token)) throw badRequest('This verification link is not valid (unknown token): ask for a new one');
    const outcome = await useEmailVerificationToken(this.pool, hashOpaqueToken(token), this.config.now());
    if (outcome.ok) return outcome.account;
    switch (outcome.reason) {
      case 'expired':
        throw badRequest('This verification link has expired: sign in and ask for a new one');
      case 'used':
        throw badRequest('This verification link was already used: each link works once');
      case 'email_changed':
        throw badRequest('This verification link was sent to another email address of the account: ask for a new one');
      case 'unknown':
      case 'valid':
        throw badRequest('This verification link is not valid (unknown token): ask for a new one');
    }
  }

  /** Checks the current password, sets the new one and ends every other session of the account. */
  async changePassword(accountId: string, sessionId: string, current: string, next: string): Promise<void> {
    const stored = await this.credentials.findHash(accountId);
    if (!stored || !(await verifyPassword(current, stored))) {
      throw new ApiException(403, { error: ErrorNames.Forbidden, message: 'The current password is wrong' });
    }
    const passwordHash = await hashPassword(next, this.config.passwordHash);
    await replacePassword(this.pool, { accountId, passwordHash, keepSessionId: sessionId });
  }

  async overview(accountId: string): Promise<AccountOverviewResponseDto> {
    const now = this.config.now();
    const account = await this.account(accountId);
    const plan = effectivePlan(account, now);
    const period = billingPeriod(now);
    const [usage, daily] = await Promise.all([getUsageBreakdown(this.pool, accountId, now), getDailyUsage(this.pool, accountId, now)]);
    return {
      account: accountJson(account),
      plan: {
        id: plan.id,
        name: plan.name,
        monthly_allowance: plan.monthlyLimit,
        paid: plan.paid,
        webhook_endpoints: plan.webhookEndpoints,
        expired: plan.id !== account.plan,
      },
      billing_period: { start: period.start.toISOString(), end: period.end.toISOString() },
      usage: {
        used: usage.used,
        reserved: usage.reserved,
        allowance: plan.monthlyLimit,
        remaining: Math.max(0, plan.monthlyLimit - usage.used - usage.reserved),
        requests: usage.requests,
        deliveries: usage.deliveries,
        resets_at: period.end.toISOString(),
        daily,
      },
    };
  }

  async listKeys(accountId: string): Promise<ApiKeyDto[]> {
    return (await this.keys.listByAccount(accountId)).map(keyJson);
  }

  async createKey(accountId: string): Promise<ApiKeyCreatedResponseDto> {
    const created = await createApiKey(this.pool, accountId, { maxActive: MAX_ACTIVE_KEYS }).catch((error: unknown) => {
      if (!(error instanceof AccountsConflictError)) throw error;
      throw new ApiException(409, {
        error: ErrorNames.Conflict,
        message: `An account can have at most ${MAX_ACTIVE_KEYS} active API keys: revoke one first`,
      });
    });
    const key = await this.keys.findOfAccount(accountId, created.keyId);
    return { key: keyJson(key!), api_key: created.apiKey };
  }

  async revokeKey(accountId: string, keyId: string): Promise<void> {
    try {
      await revokeApiKeyOfAccount(this.pool, accountId, keyId);
    } catch (error) {
      if (error instanceof AccountsNotFoundError) {
        throw new ApiException(404, { error: ErrorNames.NotFound, message: 'No API key with this id on the account' });
      }
      throw error;
    }
  }
}
