import { rows, Sql } from '@cars/persistence';
import { SealedSecret } from './subscriptions.repository';

/** An endpoint's signing secrets as stored: the current one, and the one kept for a rotation's overlap. */
export interface SealedSecretsRow {
  id: string;
  secret_ciphertext: string;
  secret_key_id: string;
  previous_secret_ciphertext: string | null;
  previous_secret_key_id: string | null;
}

/**
 * Up to `limit` endpoints with a secret (current or previous) not sealed under `keyId`, in id
 * order, locked for the caller's transaction (rows another transaction holds are skipped).
 */
export function lockSecretsNotSealedUnder(tx: Sql, keyId: string, limit: number): Promise<SealedSecretsRow[]> {
  return rows<SealedSecretsRow>(
    tx,
    `SELECT id, secret_ciphertext, secret_key_id, previous_secret_ciphertext, previous_secret_key_id
           FROM webhook_subscriptions
          WHERE secret_key_id <> $1 OR (previous_secret_key_id IS NOT NULL AND previous_secret_key_id <> $1)
          ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [keyId, limit],
  );
}

/** Writes an endpoint's secrets sealed anew (the plain values never reach the database). */
export async function writeSealedSecrets(tx: Sql, id: string, current: SealedSecret, previous: SealedSecret | null): Promise<void> {
  await tx.query(
    `UPDATE webhook_subscriptions
              SET secret_ciphertext = $2, secret_key_id = $3, previous_secret_ciphertext = $4, previous_secret_key_id = $5
            WHERE id = $1`,
    [id, current.ciphertext, current.keyId, previous?.ciphertext ?? null, previous?.keyId ?? null],
  );
}
