import { isForbiddenAddress } from './addresses';
import { checkDestination, DestinationPolicy, resolveForConnect } from './destination';
import { caseResolver, HOSTILE_DESTINATIONS, PUBLIC_DESTINATIONS } from './testing/destinations';

const policy: DestinationPolicy = { allowPrivate: false, resolver: caseResolver([...HOSTILE_DESTINATIONS, ...PUBLIC_DESTINATIONS]) };

describe('webhook destinations', () => {
  it(`rejects every one of ${HOSTILE_DESTINATIONS.length} hostile destinations`, async () => {
    expect(HOSTILE_DESTINATIONS.length).toBeGreaterThanOrEqual(40);
    const accepted: string[] = [];
    for (const c of HOSTILE_DESTINATIONS) {
      const result = await checkDestination(c.url, policy);
      if (result.ok) accepted.push(`${c.url} (${c.why})`);
    }
    expect(accepted).toEqual([]);
    // Names resolving to forbidden space are refused for their addresses, not by another rule.
    const byAddress = HOSTILE_DESTINATIONS.filter((c) => c.why.startsWith('a name resolving to'));
    expect(byAddress.length).toBeGreaterThanOrEqual(30);
    for (const c of byAddress) {
      expect({ url: c.url, result: await checkDestination(c.url, policy) }).toMatchObject({ url: c.url, result: { reason: 'forbidden_address' } });
    }
  });

  it('accepts public destinations', async () => {
    for (const c of PUBLIC_DESTINATIONS) {
      const result = await checkDestination(c.url, policy);
      expect({ url: c.url, ok: result.ok }).toEqual({ url: c.url, ok: true });
      if (result.ok) expect(result.addresses).toEqual(c.resolvesTo);
    }
  });

  it('says why, per rule', async () => {
    const reason = async (url: string) => {
      const result = await checkDestination(url, policy);
      return result.ok ? 'ok' : result.reason;
    };
    expect(await reason('nope')).toBe('invalid_url');
    expect(await reason('http://example.com/')).toBe('scheme');
    expect(await reason('https://example.com:8443/')).toBe('port');
    expect(await reason('https://u:p@example.com/')).toBe('credentials');
    expect(await reason('https://example.com/#x')).toBe('fragment');
    expect(await reason('https://0x7f.1/')).toBe('forbidden_host');
    expect(await reason('https://foo.localhost/')).toBe('forbidden_host');
    expect(await reason('https://split.example.net/hook')).toBe('forbidden_address');
  });

  it('accepts a name that does not resolve yet (the worker fails it as dns_error)', async () => {
    const result = await checkDestination('https://not-yet.example.com/hook', policy);
    expect(result).toMatchObject({ ok: true, addresses: [] });
    expect(await resolveForConnect(new URL('https://not-yet.example.com/hook'), policy)).toMatchObject({ ok: false, code: 'dns_error' });
  });

  it('blocks at connect time a name that started resolving to private space', async () => {
    let answer = ['93.184.215.14'];
    const flipping: DestinationPolicy = { allowPrivate: false, resolver: async () => answer };
    const url = new URL('https://flip.example.com/hook');
    expect(await resolveForConnect(url, flipping)).toEqual({ ok: true, address: '93.184.215.14', family: 4 });
    answer = ['93.184.215.14', '127.0.0.1'];
    expect(await resolveForConnect(url, flipping)).toMatchObject({ ok: false, code: 'destination_blocked' });
  });

  it('relaxes address, scheme and port for local receivers when allowed, never credentials', async () => {
    const local: DestinationPolicy = { allowPrivate: true, resolver: async () => ['127.0.0.1'] };
    expect(await checkDestination('http://127.0.0.1:4010/hook', local)).toMatchObject({ ok: true, addresses: ['127.0.0.1'] });
    expect(await checkDestination('https://localhost:8443/hook', local)).toMatchObject({ ok: true });
    expect(await checkDestination('https://u:p@localhost/hook', local)).toMatchObject({ ok: false, reason: 'credentials' });
    expect(await resolveForConnect(new URL('http://127.0.0.1:4010/'), local)).toEqual({ ok: true, address: '127.0.0.1', family: 4 });
  });

  it('judges embedded IPv4 by the address inside', () => {
    expect(isForbiddenAddress('::ffff:93.184.215.14')).toBe(false);
    expect(isForbiddenAddress('::ffff:192.168.0.1')).toBe(true);
    expect(isForbiddenAddress('64:ff9b::5db8:d70e')).toBe(false);
    expect(isForbiddenAddress('2002:5db8:d70e::1')).toBe(false);
    expect(isForbiddenAddress('2002:7f00:1::1')).toBe(true);
    expect(isForbiddenAddress('not an address')).toBe(true);
    expect(isForbiddenAddress('[fe80::1%eth0]')).toBe(true);
  });
});
