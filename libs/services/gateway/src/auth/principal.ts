import { KeyHolderRecord } from '@cars/accounts';

/** Who is calling: the key and its account as the key cache last read them. */
export type ApiPrincipal = KeyHolderRecord;
