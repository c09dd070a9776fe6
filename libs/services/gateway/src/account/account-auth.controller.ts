import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accountJson } from '@cars/accounts';
import { ErrorNames } from '@cars/contracts';
import { ErrorResponseDto } from '../auctions/api-responses';
import { ApiException } from '../http/api-exception';
import { AccountAreaService } from './account-area.service';
import { AccountRoute, ApiBurstLimited, ApiChangeForbidden, sessionOf } from './account-session.guard';
import { AccountSessions } from './account-sessions.service';
import { listenOrigin } from './request-origin';
import { SignInLimits } from './sign-in-limits';
import { VerificationMailer } from './verification-mailer';
import {
  AccountResponseDto,
  AccountSessionResponseDto,
  SignUpResponseDto,
  VerificationMailResponseDto,
  ChangePasswordBodyDto,
  SignInBodyDto,
  SignUpBodyDto,
  VerifyEmailBodyDto,
} from './dto/account.dto';

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } } };
const SET_COOKIE = {
  'Set-Cookie': {
    description: '`cars_session=<opaque token>; Path=/; Max-Age=…; HttpOnly; SameSite=Strict` (+ `Secure` unless the request came to a loopback host over HTTP).',
    schema: { type: 'string' },
  },
};

const ApiValidation = () =>
  ApiBadRequestResponse({ type: ErrorResponseDto, description: '`Validation Error`: a bad or unknown member; `details` names each.' });

/**
 * Sign-up, sign-in, sign-out, the session, email verification and password change of the account
 * area (console). Everything is JSON; changes need the session's CSRF token (except sign-up,
 * sign-in and verification, which have no session yet).
 */
@ApiTags('Account area')
@Controller('account')
export class AccountAuthController {
  constructor(
    private readonly area: AccountAreaService,
    private readonly sessions: AccountSessions,
    private readonly limits: SignInLimits,
    private readonly mailer: VerificationMailer,
  ) {}

  @Post('signup')
  @HttpCode(201)
  @AccountRoute({ session: 'none' })
  @ApiOperation({
    summary: 'Sign up',
    description:
      'Creates an account on the Free plan with an unverified email address, signs it in (session cookie) and sends the ' +
      'verification link (single use, valid 24 h). Password: 10 to 200 characters. Limited per client address with sign-in.',
  })
  @ApiBody({ type: SignUpBodyDto })
  @ApiCreatedResponse({ type: SignUpResponseDto, headers: SET_COOKIE })
  @ApiValidation()
  @ApiChangeForbidden()
  @ApiConflictResponse({ type: ErrorResponseDto, description: '`Conflict`: an account with this email address exists.' })
  @ApiUnsupportedMediaTypeResponse({ type: ErrorResponseDto, description: 'The body is not `application/json`.' })
  @ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: '`Rate Limit Exceeded`: too many attempts from this address.', headers: RETRY_AFTER })
  async signUp(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: SignUpBodyDto): Promise<SignUpResponseDto> {
    await this.limits.takeAddress(request.ip);
    const account = await this.area.signUp(body.email, body.password);
    const { csrfToken } = await this.sessions.start(request, reply, account.id);
    const { link, expiresAt } = await this.area.newVerificationLink(account, listenOrigin(request));
    const mail = await this.mailer.sendVerification(account.email, link, expiresAt);
    return { account: accountJson(account), csrf_token: csrfToken, verification_email_via: this.mailer.via, verification_email: mail };
  }

  @Post('signin')
  @HttpCode(200)
  @AccountRoute({ session: 'none' })
  @ApiOperation({
    summary: 'Sign in',
    description:
      'Opens a console session (cookie `cars_session`) and returns the CSRF token of its changes. The same 401 for an ' +
      'unknown email and a wrong password. At most 5 attempts a minute per email address and 20 per client address (429, `Retry-After`).',
  })
  @ApiBody({ type: SignInBodyDto })
  @ApiOkResponse({ type: AccountSessionResponseDto, headers: SET_COOKIE })
  @ApiValidation()
  @ApiUnauthorizedResponse({ type: ErrorResponseDto, description: '`Unauthorized`: the email address or password is wrong.' })
  @ApiChangeForbidden()
  @ApiUnsupportedMediaTypeResponse({ type: ErrorResponseDto, description: 'The body is not `application/json`.' })
  @ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: '`Rate Limit Exceeded`: too many attempts for this email or from this address.', headers: RETRY_AFTER })
  async signIn(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: SignInBodyDto): Promise<AccountSessionResponseDto> {
    await this.limits.takeAddress(request.ip);
    await this.limits.takeEmail(body.email);
    const account = await this.area.signIn(body.email, body.password);
    const { csrfToken } = await this.sessions.start(request, reply, account.id);
    return { account: accountJson(account), csrf_token: csrfToken, verification_email_via: this.mailer.via };
  }

  @Post('signout')
  @HttpCode(204)
  @AccountRoute()
  @ApiOperation({ summary: 'Sign out', description: 'Ends this session (server-side) and clears the cookie.' })
  @ApiNoContentResponse({ description: 'Signed out.', headers: SET_COOKIE })
  @ApiChangeForbidden()
  @ApiBurstLimited()
  async signOut(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    await this.sessions.end(request, reply, sessionOf(request));
  }

  @Get('session')
  @AccountRoute()
  @ApiOperation({ summary: 'The current session', description: 'The signed-in account and the CSRF token of this session.' })
  @ApiOkResponse({ type: AccountSessionResponseDto })
  @ApiBurstLimited()
  async session(@Req() request: FastifyRequest): Promise<AccountSessionResponseDto> {
    const session = sessionOf(request);
    return { account: accountJson(await this.area.account(session.accountId)), csrf_token: session.csrfToken, verification_email_via: this.mailer.via };
  }

  @Post('verify-email')
  @HttpCode(200)
  @AccountRoute({ session: 'none' })
  @ApiOperation({
    summary: 'Verify the email address',
    description:
      'Uses the `token` of a verification link (`/console/verify?token=…`) once. Needs no session: the link may be opened in ' +
      'another browser. 400 `Bad Request` says whether the token is unknown, already used or expired.',
  })
  @ApiBody({ type: VerifyEmailBodyDto })
  @ApiOkResponse({ type: AccountResponseDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: '`Bad Request`: unknown, used or expired token (the message says which); `Validation Error`: a bad body.' })
  @ApiChangeForbidden()
  @ApiUnsupportedMediaTypeResponse({ type: ErrorResponseDto, description: 'The body is not `application/json`.' })
  async verifyEmail(@Body() body: VerifyEmailBodyDto): Promise<AccountResponseDto> {
    return { account: accountJson(await this.area.verifyEmail(body.token)) };
  }

  @Post('verify-email/resend')
  @HttpCode(202)
  @AccountRoute()
  @ApiOperation({ summary: 'Send the verification link again', description: 'A new link (earlier ones stay valid until used or expired). Once a minute.' })
  @ApiAcceptedResponse({ type: VerificationMailResponseDto, description: 'A new link: mailed, or (without SMTP_URL) written to the server log.' })
  @ApiConflictResponse({ type: ErrorResponseDto, description: '`Conflict`: the address is already verified.' })
  @ApiChangeForbidden()
  @ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: '`Rate Limit Exceeded`: a link was sent less than a minute ago, or the burst limit.', headers: RETRY_AFTER })
  async resendVerification(@Req() request: FastifyRequest): Promise<VerificationMailResponseDto> {
    const account = await this.area.account(sessionOf(request).accountId);
    if (account.emailVerified) {
      throw new ApiException(409, { error: ErrorNames.Conflict, message: 'The email address of this account is already verified' });
    }
    await this.limits.takeVerificationMail(account.id);
    const { link, expiresAt } = await this.area.newVerificationLink(account, listenOrigin(request));
    return { verification_email: await this.mailer.sendVerification(account.email, link, expiresAt) };
  }

  @Post('password')
  @HttpCode(204)
  @AccountRoute()
  @ApiOperation({ summary: 'Change the password', description: 'Needs the current password; ends every other session of the account (this one stays).' })
  @ApiBody({ type: ChangePasswordBodyDto })
  @ApiNoContentResponse({ description: 'Changed.' })
  @ApiValidation()
  @ApiChangeForbidden('the current password is wrong')
  @ApiBurstLimited()
  async changePassword(@Req() request: FastifyRequest, @Body() body: ChangePasswordBodyDto): Promise<void> {
    const session = sessionOf(request);
    await this.area.changePassword(session.accountId, session.id, body.current_password, body.new_password);
  }
}
