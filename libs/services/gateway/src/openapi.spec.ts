import { openApiServerUrl } from './openapi';

describe('openApiServerUrl (the document\'s `servers`)', () => {
  it('is the public origin when PUBLIC_BASE_URL is set', () => {
    expect(openApiServerUrl({ PUBLIC_BASE_URL: 'https://cars.example.com' })).toBe('https://cars.example.com');
  });

  it('is the origin the document was fetched from otherwise', () => {
    expect(openApiServerUrl({})).toBe('/');
  });

  it('refuses a PUBLIC_BASE_URL that is not an origin, as the boot does', () => {
    expect(() => openApiServerUrl({ PUBLIC_BASE_URL: 'cars.example.com/api' })).toThrow(/PUBLIC_BASE_URL/);
  });
});
