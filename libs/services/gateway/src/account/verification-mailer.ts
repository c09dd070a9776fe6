import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { errorMessage } from '@cars/contracts';
import { createTransport, Transporter } from 'nodemailer';
import { ACCOUNT_AREA_CONFIG, AccountAreaConfig } from './account-area.config';

/** What became of a verification link: mailed over SMTP, written to the log (no SMTP_URL), or SMTP failed. */
export type VerificationMail = 'sent' | 'logged' | 'failed';

/**
 * Sends the email verification link: over SMTP (nodemailer) when SMTP_URL is set; otherwise it
 * writes the link to the log as one info line, which is how the quick start (`npm start`, no
 * mail server) shows it. Never both: with SMTP the link (a credential until used) stays out of the
 * logs. In production (NODE_ENV=production) a link is never logged: without SMTP_URL the gateway
 * warns once at start, and each verification mail is reported as not sent.
 */
@Injectable()
export class VerificationMailer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('AccountArea');
  private transport?: Transporter;

  constructor(@Inject(ACCOUNT_AREA_CONFIG) private readonly config: AccountAreaConfig) {}

  onModuleInit(): void {
    if (!this.config.smtpUrl && !this.config.logVerificationLinks) {
      this.logger.warn('SMTP_URL is unset: verification mail cannot be sent, and in production (NODE_ENV=production) the links are not logged either, so new accounts cannot verify their email address');
    }
    if (this.config.smtpUrl) {
      this.transport = createTransport(this.config.smtpUrl);
      if (!this.config.publicBaseUrl) {
        this.logger.warn('SMTP_URL is set but PUBLIC_BASE_URL is not: verification links point at the address and port each sign-up reached the gateway on');
      }
    }
  }

  onApplicationShutdown(): void {
    this.transport?.close();
  }

  /**
   * How this server delivers links: `email` over SMTP, or `log` (no SMTP_URL outside production:
   * the quick start). Production never logs links, so it says `email` even without SMTP_URL (a
   * misconfiguration the start warns about; each send then answers `failed`).
   */
  get via(): 'email' | 'log' {
    return this.config.smtpUrl || !this.config.logVerificationLinks ? 'email' : 'log';
  }

  /**
   * `sent` when handed to the SMTP server, `logged` without SMTP_URL outside production, `failed`
   * (a warning without the link) when SMTP failed or production has no SMTP_URL.
   */
  async sendVerification(to: string, link: string, expiresAt: Date): Promise<VerificationMail> {
    if (!this.transport) {
      if (!this.config.logVerificationLinks) {
        this.logger.warn('verification mail not sent: SMTP_URL is unset (production does not log the link)');
        return 'failed';
      }
      this.logger.log(`Email verification for ${to}: open ${link} (valid until ${expiresAt.toISOString()})`);
      return 'logged';
    }
    try {
      await this.transport.sendMail({
        from: this.config.mailFrom,
        to,
        subject: 'Verify your email address for Classic Car Auction Data',
        text: [
          'Welcome to the Classic Car Auction Data API.',
          '',
          'Open this link to verify your email address:',
          link,
          '',
          `The link works once and expires at ${expiresAt.toISOString()}.`,
          'If you did not sign up, ignore this message.',
        ].join('\n'),
      });
      return 'sent';
    } catch (error) {
      this.logger.warn(`could not send the verification mail (SMTP): ${errorMessage(error).slice(0, 200)}`);
      return 'failed';
    }
  }
}
