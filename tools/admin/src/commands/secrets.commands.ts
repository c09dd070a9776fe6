import { pgPoolOf } from '@cars/persistence';
import { resolveWebhookSecretKey } from '@cars/runtime';
import { reencryptSecrets } from '@cars/service-webhooks';
import { SecretCipher } from '@cars/signing';
import { AdminCommand } from '../command';

/** Webhook signing secrets at rest (docs/api/webhooks.md, "Secrets at rest"). */
export const secretsCommands: AdminCommand[] = [
  {
    name: 'secrets:reencrypt',
    usage: 'secrets:reencrypt',
    async run({ db }) {
      // WEBHOOK_SECRET_KEY: the new key first, the old ones after it until this has run.
      const cipher = SecretCipher.fromEnv(resolveWebhookSecretKey());
      const result = await reencryptSecrets(pgPoolOf(await db()), cipher);
      return { key_id: result.keyId, subscriptions: result.subscriptions, secrets_reencrypted: result.secrets };
    },
  },
];
