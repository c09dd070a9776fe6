import { parseAccountChange } from './topology';

describe('account_changes payload', () => {
  it('reads the account, and the key when a key changed', () => {
    expect(parseAccountChange('{"account_id":"a1"}')).toEqual({ accountId: 'a1' });
    expect(parseAccountChange('{"account_id":"a1","key_hash":"h"}')).toEqual({ accountId: 'a1', keyHash: 'h' });
    expect(parseAccountChange('{"account_id":"a1","key_hash":null}')).toEqual({ accountId: 'a1' });
  });

  it('is null for a payload that is not one', () => {
    expect(parseAccountChange('not json')).toBeNull();
    expect(parseAccountChange('{"account_id":7}')).toBeNull();
    expect(parseAccountChange('null')).toBeNull();
  });
});
