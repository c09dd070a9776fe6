import { Inject, Injectable } from '@nestjs/common';
import { hashOpaqueToken, isWellFormedOpaqueToken, newOpaqueToken, SessionRecord, SessionsRepository } from '@cars/accounts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ACCOUNT_AREA_CONFIG, AccountAreaConfig } from './account-area.config';
import { clearedSessionCookie, sessionCookie, sessionTokenOf } from './session-cookie';

/** The console session of a request: its row, and the hash of its token (to end it). */
export interface AccountSession extends SessionRecord {
  tokenHash: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the account area's guard on routes that take a console session. */
    accountSession?: AccountSession;
  }
}

/**
 * Console sessions: a random token in the `cars_session` cookie, its SHA-256 hash and a CSRF token
 * in `account_sessions`. Each request reads its row (one indexed query, which also moves the idle
 * expiry at most once a minute); there is no cache, so sign-out and password change bite at once.
 */
@Injectable()
export class AccountSessions {
  constructor(
    private readonly sessions: SessionsRepository,
    @Inject(ACCOUNT_AREA_CONFIG) private readonly config: AccountAreaConfig,
  ) {}

  /** Opens a session for the account, sets its cookie on the reply, and returns its CSRF token. */
  async start(request: FastifyRequest, reply: FastifyReply, accountId: string): Promise<{ id: string; csrfToken: string }> {
    const { token, tokenHash } = newOpaqueToken();
    const csrfToken = newOpaqueToken().token;
    const now = this.config.now();
    await this.sessions.deleteExpired(now, accountId);
    const { id, expiresAt } = await this.sessions.insert({
      accountId,
      tokenHash,
      csrfToken,
      now,
      idleMs: this.config.sessionIdleMs,
      absoluteMs: this.config.sessionMaxAgeMs,
    });
    void reply.header('set-cookie', sessionCookie(request, token, expiresAt, now));
    return { id, csrfToken };
  }

  /** The live session of the request's cookie, or null. */
  async find(request: FastifyRequest): Promise<AccountSession | null> {
    const token = sessionTokenOf(request);
    if (!isWellFormedOpaqueToken(token)) return null;
    const tokenHash = hashOpaqueToken(token);
    const session = await this.sessions.findLive(tokenHash, this.config.now(), this.config.sessionIdleMs);
    return session ? { ...session, tokenHash } : null;
  }

  /** Ends the session and clears the cookie. */
  async end(request: FastifyRequest, reply: FastifyReply, session: AccountSession): Promise<void> {
    await this.sessions.deleteByTokenHash(session.tokenHash);
    void reply.header('set-cookie', clearedSessionCookie(request));
  }
}
