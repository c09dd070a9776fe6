import { confirmDialog, revealSecret } from '../components/dialog';
import { toast } from '../components/toast';
import { alertBox, badge, busy, button, card, code, emptyState, pageHeader, skeleton, table } from '../components/ui';
import { api } from '../lib/api';
import { h, replace } from '../lib/dom';
import { dateTime, relative } from '../lib/format';
import { humanize } from '../lib/messages';
import { PageContext } from '../lib/router';
import type { ApiKey } from '../lib/types';

export function keysPage(context: PageContext): Node {
  const list = h('div', null, skeleton(4));
  const create = button('Create API key', { variant: 'primary', icon: 'plus', onclick: () => void createKey() });
  const root = h(
    'div',
    { class: 'page' },
    pageHeader('API keys', {
      description: h('span', null, 'Keys authenticate your requests to the data API: send one as ', code('Authorization: Bearer <key>'), '. Keep them secret; revoke a key you no longer use.'),
      actions: [create],
    }),
    card({ title: 'Your keys', description: 'A key is shown in full once, when it is created. Here it is identified by its prefix.' }, list),
  );

  const load = async () => {
    try {
      const { data } = await api.keys();
      if (context.signal.aborted) return;
      render(data);
    } catch (error) {
      if (!context.signal.aborted) replace(list, alertBox(humanize(error, 'load your keys')));
    }
  };

  const render = (keys: ApiKey[]) => {
    const sorted = [...keys].sort((a, b) => Number(Boolean(a.revoked_at)) - Number(Boolean(b.revoked_at)) || b.created_at.localeCompare(a.created_at));
    if (sorted.length === 0) {
      return replace(
        list,
        emptyState({
          icon: 'key',
          title: 'No API keys yet',
          message: 'Create a key to start calling /auctions, /stats and the other routes.',
          action: button('Create your first key', { variant: 'primary', icon: 'plus', onclick: () => void createKey() }),
        }),
      );
    }
    replace(
      list,
      table<ApiKey>(
        [
          { label: 'Key', cell: (key) => code(`${key.prefix}…`) },
          {
            label: 'Status',
            cell: (key) => (key.revoked_at ? badge('Revoked', 'gray', { title: `Revoked ${dateTime(key.revoked_at)}` }) : badge('Active', 'green', { dot: true })),
          },
          { label: 'Created', cell: (key) => h('time', { datetime: key.created_at, title: dateTime(key.created_at) }, relative(key.created_at)) },
          {
            label: 'Last used',
            cell: (key) => (key.last_used_at ? h('time', { datetime: key.last_used_at, title: dateTime(key.last_used_at) }, relative(key.last_used_at)) : h('span', { class: 'muted' }, 'Never')),
          },
          {
            label: 'Actions',
            class: 'cell-actions',
            cell: (key) =>
              key.revoked_at
                ? null
                : button('Revoke', { size: 'sm', variant: 'ghost', icon: 'trash', onclick: (event) => void revoke(key, event.currentTarget as HTMLButtonElement), attrs: { 'aria-label': `Revoke key ${key.prefix}` } }),
          },
        ],
        sorted,
        { caption: 'API keys', rowAttrs: (key) => ({ dataset: { prefix: key.prefix, state: key.revoked_at ? 'revoked' : 'active' } }) },
      ),
    );
  };

  const createKey = () =>
    busy(create, async () => {
      try {
        const created = await api.createKey();
        await revealSecret({
          title: 'Your new API key',
          intro: 'Copy the key now and store it safely. Send it as Authorization: Bearer <key>.',
          value: created.api_key,
          label: 'API key',
        });
        toast(`Key ${created.key.prefix}… is ready to use.`, 'success', 'API key created');
        await load();
      } catch (error) {
        const human = humanize(error, 'create the key');
        toast(human.message, 'error', human.title);
      }
    });

  const revoke = async (key: ApiKey, control: HTMLButtonElement) => {
    const ok = await confirmDialog({
      title: 'Revoke this key?',
      message: h('span', null, 'Requests that use ', code(`${key.prefix}…`), ' will be refused right away. This cannot be undone.'),
      confirm: 'Revoke key',
      danger: true,
    });
    if (!ok) return;
    await busy(control, async () => {
      try {
        await api.revokeKey(key.id);
        toast(`Key ${key.prefix}… was revoked.`);
        await load();
      } catch (error) {
        const human = humanize(error, 'revoke the key');
        toast(human.message, 'error', human.title);
      }
    });
  };

  void load();
  return root;
}
