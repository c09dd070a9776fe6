import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NotifyChannels } from '@cars/contracts';

/**
 * The NOTIFY channels the services listen on (libs/contracts `NotifyChannels`) are the ones the
 * migrations' triggers send: a name changed on one side only would leave listeners waiting for
 * wake-ups that never come (the sweeps would hide it, seconds late).
 */
describe('NOTIFY channels', () => {
  const migrations = readdirSync(__dirname)
    .filter((file) => /^\d+-\w+\.ts$/.test(file))
    .map((file) => readFileSync(join(__dirname, file), 'utf8'))
    .join('\n');
  const sent = new Set([...migrations.matchAll(/pg_notify\('([a-z_]+)'/g)].map((match) => match[1]));

  it('has a trigger sending each channel the services listen on, and no other', () => {
    expect([...sent].sort()).toEqual(Object.values(NotifyChannels).sort());
  });
});
