import { SecretCipher } from '@cars/signing';
import { withTransaction } from '@cars/persistence';
import { lockSecretsNotSealedUnder, writeSealedSecrets } from '@cars/webhook-store';
import { Pool } from 'pg';

/**
 * Master-key rotation (`admin secrets:reencrypt`): every signing secret — current and the one kept
 * for the rotation overlap — not sealed under the first key of WEBHOOK_SECRET_KEY is decrypted with
 * the key it names and sealed again under the first. In batches, each its own transaction, with
 * the rows locked; safe to run again and while the services run (they read either key). Secrets
 * are never printed: the result is counts and the key id.
 */
export async function reencryptSecrets(
  pool: Pool,
  cipher: SecretCipher,
  batchSize = 500,
): Promise<{ keyId: string; subscriptions: number; secrets: number }> {
  const keyId = cipher.currentKeyId;
  let subscriptions = 0;
  let secrets = 0;
  for (;;) {
    const done = await withTransaction(pool, async (client) => {
      const rows = await lockSecretsNotSealedUnder(client, keyId, batchSize);
      for (const row of rows) {
        const current =
          row.secret_key_id === keyId
            ? { ciphertext: row.secret_ciphertext, keyId }
            : cipher.encrypt(cipher.decrypt(row.secret_ciphertext, row.secret_key_id));
        const previous =
          row.previous_secret_ciphertext === null || row.previous_secret_key_id === null
            ? null
            : row.previous_secret_key_id === keyId
              ? { ciphertext: row.previous_secret_ciphertext, keyId }
              : cipher.encrypt(cipher.decrypt(row.previous_secret_ciphertext, row.previous_secret_key_id));
        secrets += Number(row.secret_key_id !== keyId) + Number(previous !== null && row.previous_secret_key_id !== keyId);
        await writeSealedSecrets(client, row.id, current, previous);
      }
      subscriptions += rows.length;
      return rows.length < batchSize;
    });
    if (done) return { keyId, subscriptions, secrets };
  }
}
