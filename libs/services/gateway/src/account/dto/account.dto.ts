import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '@cars/accounts';

/** Request and response bodies of `/account/…` (the account area / console). Wire format: snake_case. */

const PASSWORD_RULE = `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`;

export class SignUpBodyDto {
  @ApiProperty({ type: 'string', example: 'you@example.com', maxLength: 254 })
  @IsString({ message: 'email must be a string' })
  @MaxLength(254, { message: 'email must be at most 254 characters' })
  @Matches(/^\s*[^\s@\u0000]+@[^\s@\u0000]+\.[^\s@\u0000]+\s*$/, { message: 'email must be an email address' })
  email: string;

  @ApiProperty({ type: 'string', format: 'password', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH, example: 'correct horse battery staple' })
  @IsString({ message: 'password must be a string' })
  @MinLength(PASSWORD_MIN_LENGTH, { message: `password must be ${PASSWORD_RULE}` })
  @MaxLength(PASSWORD_MAX_LENGTH, { message: `password must be ${PASSWORD_RULE}` })
  password: string;
}

export class SignInBodyDto {
  @ApiProperty({ type: 'string', example: 'you@example.com', maxLength: 254 })
  @IsString({ message: 'email must be a string' })
  @MaxLength(254, { message: 'email must be at most 254 characters' })
  // PostgreSQL text cannot hold NUL: the lookup would fail, so it is a 400 here.
  @Matches(/^[^\u0000]*$/, { message: 'email must not contain NUL characters' })
  email: string;

  @ApiProperty({ type: 'string', format: 'password', maxLength: PASSWORD_MAX_LENGTH })
  @IsString({ message: 'password must be a string' })
  @MaxLength(PASSWORD_MAX_LENGTH, { message: `password must be at most ${PASSWORD_MAX_LENGTH} characters` })
  password: string;
}

export class VerifyEmailBodyDto {
  @ApiProperty({ type: 'string', description: 'The `token` of the verification link.', maxLength: 200 })
  @IsString({ message: 'token must be a string' })
  @MaxLength(200, { message: 'token must be at most 200 characters' })
  token: string;
}

export class ChangePasswordBodyDto {
  @ApiProperty({ type: 'string', format: 'password', maxLength: PASSWORD_MAX_LENGTH })
  @IsString({ message: 'current_password must be a string' })
  @MaxLength(PASSWORD_MAX_LENGTH, { message: `current_password must be at most ${PASSWORD_MAX_LENGTH} characters` })
  current_password: string;

  @ApiProperty({ type: 'string', format: 'password', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH })
  @IsString({ message: 'new_password must be a string' })
  @MinLength(PASSWORD_MIN_LENGTH, { message: `new_password must be ${PASSWORD_RULE}` })
  @MaxLength(PASSWORD_MAX_LENGTH, { message: `new_password must be ${PASSWORD_RULE}` })
  new_password: string;
}

export class AccountDto {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', example: 'you@example.com' })
  email: string;

  @ApiProperty({ type: 'boolean' })
  email_verified: boolean;

  @ApiProperty({ type: 'string', enum: ['free', '1k', '10k', '100k'], description: 'The plan as set; see `plan_expires_at` (a lapsed paid plan is Free: GET /account/overview `plan`).' })
  plan: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When a paid plan lapses to Free; null: it does not.' })
  plan_expires_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;
}

export class AccountSessionResponseDto {
  @ApiProperty({ type: AccountDto })
  account: AccountDto;

  @ApiProperty({ type: 'string', description: 'Send it as `X-CSRF-Token` with every state-changing `/account` request of this session.' })
  csrf_token: string;

  @ApiProperty({
    enum: ['email', 'log'],
    description:
      'How this server delivers email verification links: `email` over SMTP; `log` when no mail server is configured (the quick ' +
      "start without SMTP_URL): the link is written to the server's log as `Email verification for <email>: open <link>`.",
  })
  verification_email_via: 'email' | 'log';
}

const VERIFICATION_EMAIL = {
  enum: ['sent', 'logged', 'failed'],
  description:
    "What became of the verification link: `sent` by email; `logged` — written to the server's log (no SMTP_URL); `failed` — the " +
    'mail server refused it: ask for a new link later.',
} as const;

export class SignUpResponseDto extends AccountSessionResponseDto {
  @ApiProperty(VERIFICATION_EMAIL)
  verification_email: 'sent' | 'logged' | 'failed';
}

export class VerificationMailResponseDto {
  @ApiProperty(VERIFICATION_EMAIL)
  verification_email: 'sent' | 'logged' | 'failed';
}

export class AccountResponseDto {
  @ApiProperty({ type: AccountDto })
  account: AccountDto;
}

export class PlanSummaryDto {
  @ApiProperty({ type: 'string', enum: ['free', '1k', '10k', '100k'], description: 'The plan in force now (Free once a paid plan has lapsed).' })
  id: string;

  @ApiProperty({ type: 'string', example: '1K' })
  name: string;

  @ApiProperty({ type: 'integer', example: 1000, description: 'Units per billing period.' })
  monthly_allowance: number;

  @ApiProperty({ type: 'boolean', description: '`/stats` and webhooks need a paid plan.' })
  paid: boolean;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Webhook endpoints allowed; null: unlimited.' })
  webhook_endpoints: number | null;

  @ApiProperty({ type: 'boolean', description: 'True when the account\'s paid plan has lapsed (it is on Free).' })
  expired: boolean;
}

export class BillingPeriodDto {
  @ApiProperty({ type: 'string', format: 'date-time', description: 'First instant of the calendar month (UTC).' })
  start: string;

  @ApiProperty({ type: 'string', format: 'date-time', description: 'Start of the next period: when the allowance resets.' })
  end: string;
}

export class DailyUsageDto {
  @ApiProperty({ type: 'string', format: 'date', example: '2026-11-03', description: 'The UTC day.' })
  date: string;

  @ApiProperty({ type: 'integer', description: 'Units charged that day as API requests.' })
  requests: number;

  @ApiProperty({ type: 'integer', description: 'Units charged that day for webhook deliveries (and units an operator added).' })
  deliveries: number;
}

export class UsageSummaryDto {
  @ApiProperty({ type: 'integer', description: 'Units counted this period.' })
  used: number;

  @ApiProperty({ type: 'integer', description: 'Units held by work in flight (requests being answered, deliveries being sent).' })
  reserved: number;

  @ApiProperty({ type: 'integer', description: 'Units the plan allows per period.' })
  allowance: number;

  @ApiProperty({ type: 'integer', description: 'allowance − used − reserved, never negative.' })
  remaining: number;

  @ApiProperty({ type: 'integer', description: 'Of `used`: API requests (data API, `/account/stats`, and MCP tool calls metered like requests).' })
  requests: number;

  @ApiProperty({ type: 'integer', description: 'Of `used`: successful webhook deliveries of real events (and units an operator set).' })
  deliveries: number;

  @ApiProperty({ type: 'string', format: 'date-time', description: 'When the allowance resets (= billing_period.end).' })
  resets_at: string;

  @ApiProperty({
    type: [DailyUsageDto],
    description:
      'Every UTC day of the billing period so far, oldest first, through today: the units charged that day. Days before ' +
      'per-day recording began read as zeros, so the sum can be less than `used`.',
  })
  daily: DailyUsageDto[];
}

export class AccountOverviewResponseDto {
  @ApiProperty({ type: AccountDto })
  account: AccountDto;

  @ApiProperty({ type: PlanSummaryDto })
  plan: PlanSummaryDto;

  @ApiProperty({ type: BillingPeriodDto })
  billing_period: BillingPeriodDto;

  @ApiProperty({ type: UsageSummaryDto })
  usage: UsageSummaryDto;
}

export class ApiKeyDto {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', example: 'cca_live_0123456', description: 'The first 16 characters of the key: how it is named.' })
  prefix: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'A hint, not an audit trail: recorded when a gateway (re)loads the key, at most about once per key cache window (≤ 30 s).',
  })
  last_used_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  revoked_at: string | null;
}

export class ApiKeyListResponseDto {
  @ApiProperty({ type: ApiKeyDto, isArray: true, description: 'Newest first, revoked keys included.' })
  data: ApiKeyDto[];
}

export class ApiKeyCreatedResponseDto {
  @ApiProperty({ type: ApiKeyDto })
  key: ApiKeyDto;

  @ApiProperty({ type: 'string', example: 'cca_live_0123456789ABCDEFGHIJabcdefghijXY', description: 'The key itself: shown in this response only.' })
  api_key: string;
}

export class SourceDto {
  @ApiProperty({ type: 'string', example: 'bringatrailer', description: 'The `source` value of filters and auctions.' })
  id: string;

  @ApiProperty({ type: 'string', example: 'Bring a Trailer' })
  name: string;

  @ApiProperty({ type: 'boolean', description: 'Followed live (`/auctions/live`).' })
  live: boolean;
}

export class SourceListResponseDto {
  @ApiProperty({ type: SourceDto, isArray: true })
  data: SourceDto[];
}

export class AccountNameListResponseDto {
  @ApiProperty({ type: 'string', isArray: true, example: ['Alfa Romeo', 'Mercedes-Benz', 'Porsche'] })
  data: string[];
}

