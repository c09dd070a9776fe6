import { applyDecorators, Logger, Module } from '@nestjs/common';
import {
  AccountsRepository,
  ApiKeysRepository,
  CredentialsRepository,
  EmailVerificationsRepository,
  SessionsRepository,
} from '@cars/accounts';
import { ApiAccessModule } from '../auth/api-access.module';
import { webhookRoutes } from '../webhooks/webhooks.controller';
import { ACCOUNT_AREA_CONFIG, ACCOUNT_AREA_OVERRIDES, AccountAreaConfig, loadAccountAreaConfig } from './account-area.config';
import { AccountAreaService } from './account-area.service';
import { AccountAuthController } from './account-auth.controller';
import { AccountDataController } from './account-data.controller';
import { AccountRoute, AccountSessionGuard, ApiChangeForbidden } from './account-session.guard';
import { AccountSessions } from './account-sessions.service';
import { SignInLimits } from './sign-in-limits';
import { VerificationMailer } from './verification-mailer';

/** `/account/webhooks/**`: the webhook management routes of `/webhooks`, for the session's account. */
export const AccountWebhooksController = webhookRoutes({
  name: 'AccountWebhooksController',
  path: 'account/webhooks',
  auth: () => applyDecorators(AccountRoute(), ApiChangeForbidden('the plan rules of `/webhooks` (paid plan, verified email; the message says which)')),
  tag: 'Account area',
  unauthorized: '`Unauthorized`: no live console session (sign in).',
});

/**
 * The account area (console) of the gateway: sign-up and sign-in with sessions, email
 * verification, the overview, API keys, webhooks and stats for the signed-in account. Every route
 * is under `/account` and JSON; docs/api/account-area.md.
 */
@Module({
  imports: [ApiAccessModule],
  controllers: [AccountAuthController, AccountDataController, AccountWebhooksController],
  providers: [
    {
      provide: ACCOUNT_AREA_CONFIG,
      inject: [{ token: ACCOUNT_AREA_OVERRIDES, optional: true }],
      useFactory: (overrides?: Partial<AccountAreaConfig>): AccountAreaConfig => {
        const config = loadAccountAreaConfig(process.env, overrides ?? {});
        new Logger('AccountArea').log(
          config.smtpUrl ? 'verification mail goes over SMTP (SMTP_URL)' : 'SMTP_URL is not set: verification links are written to this log',
        );
        return config;
      },
    },
    AccountsRepository,
    ApiKeysRepository,
    CredentialsRepository,
    SessionsRepository,
    EmailVerificationsRepository,
    AccountSessions,
    AccountAreaService,
    SignInLimits,
    VerificationMailer,
    AccountSessionGuard,
  ],
})
export class AccountModule {}
