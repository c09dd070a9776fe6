import { KeyHolderRecord } from '@cars/accounts';

/**
 * Who is calling: the holder of an API key as the key cache last read it, or — on the account
 * area's routes only — the account of a console session, with `keyId` null (a session is not a
 * key, and never authorizes a route of the data API).
 */
export type ApiPrincipal = Omit<KeyHolderRecord, 'keyId'> & { keyId: string | null };
