import { Inject, Injectable } from '@nestjs/common';
import { generateSigningSecret, SecretCipher } from '@cars/signing';
import { SealedSecret } from '@cars/webhook-store';
import { WEBHOOKS_OPTIONS, WebhooksOptions } from './webhooks.options';

/** Endpoint signing secrets: made here, stored only sealed under WEBHOOK_SECRET_KEY. */
@Injectable()
export class SecretBox {
  private readonly cipher: SecretCipher;

  constructor(@Inject(WEBHOOKS_OPTIONS) options: WebhooksOptions) {
    this.cipher = SecretCipher.fromEnv(options.secretKeys);
  }

  /** A new `whsec_` secret: the plain value (shown once) and what is stored. */
  issue(): { secret: string; sealed: SealedSecret } {
    const secret = generateSigningSecret();
    return { secret, sealed: this.cipher.encrypt(secret) };
  }
}
