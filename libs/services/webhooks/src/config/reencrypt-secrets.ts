import { SecretCipher } from '@cars/signing';
import { withTransaction } from '@cars/persistence';
import { Pool } from 'pg';

interface SealedRow {
  id: string;
  secret_ciphertext: string;
  secret_key_id: string;
  previous_secret_ciphertext: string | null;
  previous_secret_key_id: string | null;
}

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
      const { rows } = await client.query<SealedRow>(
        `SELECT id, secret_ciphertext, secret_key_id, previous_secret_ciphertext, previous_secret_key_id
           FROM webhook_subscriptions
          WHERE secret_key_id <> $1 OR (previous_secret_key_id IS NOT NULL AND previous_secret_key_id <> $1)
          ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [keyId, batchSize],
      );
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
        await client.query(
          `UPDATE webhook_subscriptions
              SET secret_ciphertext = $2, secret_key_id = $3, previous_secret_ciphertext = $4, previous_secret_key_id = $5
            WHERE id = $1`,
          [row.id, current.ciphertext, current.keyId, previous?.ciphertext ?? null, previous?.keyId ?? null],
        );
      }
      subscriptions += rows.length;
      return rows.length < batchSize;
    });
    if (done) return { keyId, subscriptions, secrets };
  }
}
