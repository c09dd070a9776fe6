import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { checkDestination, DestinationCheck, DestinationRejectionReason, systemResolver } from '@cars/net-guard';
import { WEBHOOKS_OPTIONS, WebhooksOptions } from './webhooks.options';

/** The refusals WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true lifts (credentials and fragments stay refused). */
const LIFTED_BY_SWITCH = new Set<DestinationRejectionReason>(['scheme', 'port', 'forbidden_host', 'forbidden_address']);

export const LOCAL_RECEIVERS_HINT =
  'For a local receiver (http://, localhost, a private address) in development, start the server with ' +
  'WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true (never in production)';

/** The destination rules (public HTTPS on port 443) at create and patch time: net-guard's rules under the configured policy. */
@Injectable()
export class DestinationGuard implements OnModuleInit {
  private readonly logger = new Logger('Webhooks');

  constructor(@Inject(WEBHOOKS_OPTIONS) private readonly options: WebhooksOptions) {}

  onModuleInit(): void {
    if (this.options.allowPrivateDestinations) {
      this.logger.warn(
        'WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true: webhook URLs may point to private, loopback and non-https ' +
          'destinations. For tests and local receivers only; never in production.',
      );
    }
  }

  async check(url: string): Promise<DestinationCheck> {
    const result = await checkDestination(url, {
      allowPrivate: this.options.allowPrivateDestinations ?? false,
      resolver: this.options.resolver ?? systemResolver,
    });
    // A refusal the switch would lift names it: a local receiver is a common first step.
    if (!result.ok && LIFTED_BY_SWITCH.has(result.reason)) return { ...result, message: `${result.message}. ${LOCAL_RECEIVERS_HINT}` };
    return result;
  }
}
