import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { checkDestination, DestinationCheck, systemResolver } from '@cars/net-guard';
import { WEBHOOKS_OPTIONS, WebhooksOptions } from './webhooks.options';

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

  check(url: string): Promise<DestinationCheck> {
    return checkDestination(url, {
      allowPrivate: this.options.allowPrivateDestinations ?? false,
      resolver: this.options.resolver ?? systemResolver,
    });
  }
}
