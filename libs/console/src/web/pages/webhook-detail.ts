import { confirmDialog, openDialog, revealSecret } from '../components/dialog';
import { field, FormErrors, input } from '../components/form';
import { icon } from '../components/icons';
import { toast } from '../components/toast';
import { alertBox, badge, busy, button, card, code, descriptionList, emptyState, linkButton, pageHeader, skeleton, table, urlText } from '../components/ui';
import { api } from '../lib/api';
import { Child, h, replace } from '../lib/dom';
import { dateTime, number, relative, shortUrl } from '../lib/format';
import { humanize } from '../lib/messages';
import { navigate, PageContext } from '../lib/router';
import type { Delivery, Webhook } from '../lib/types';
import { deliveryBadge, healthBadge, healthOf } from './webhooks';

const POLL_MS = 2000;
/** After a test or a retry, watch closely for this long even if nothing is pending yet. */
const WATCH_MS = 30_000;

const ERROR_TEXT: Record<string, string> = {
  timeout: 'No answer within 10 seconds',
  connect_error: 'Could not connect',
  dns_error: 'The host name did not resolve',
  tls_error: 'TLS handshake failed',
  redirect: 'Answered with a redirect (not followed)',
  http_status: 'Answered with a non-2xx status',
  destination_blocked: 'Destination refused (private or reserved address)',
  interrupted: 'The attempt was interrupted',
};

function showError(error: unknown, action: string): void {
  const human = humanize(error, action);
  toast(human.message, 'error', human.title);
}

function time(iso: string | null): Child {
  return iso ? h('time', { datetime: iso, title: dateTime(iso) }, relative(iso)) : h('span', { class: 'muted' }, '—');
}

export function webhookDetailPage(context: PageContext): Node {
  const id = context.params.id ?? '';
  const header = h('div', null, pageHeader('Endpoint', { back: { label: 'Webhooks', to: 'webhooks' } }));
  const summary = h('div', { class: 'grid grid-2' }, card({ title: 'Configuration' }, skeleton(4)), card({ title: 'Health' }, skeleton(4)));
  const deliveriesBody = h('div', { class: 'deliveries' }, skeleton(5));
  const refresh = button('Refresh', { size: 'sm', icon: 'refresh', onclick: () => void loadDeliveries() });
  const deliveriesCard = card(
    { title: 'Deliveries', description: 'The 20 most recent, newest first. Failed deliveries are retried automatically: after about 1 min, 5 min, 30 min, 2 h and 8 h.', actions: [refresh], id: 'deliveries' },
    deliveriesBody,
  );
  const root = h('div', { class: 'page' }, header, summary, deliveriesCard, recoverCard(id));

  let webhook: Webhook | null = null;
  let deliveries: Delivery[] = [];
  let watchUntil = 0;
  let timer: number | undefined;
  context.signal.addEventListener('abort', () => window.clearTimeout(timer));

  const load = async () => {
    try {
      webhook = (await api.webhook(id)).data;
      if (context.signal.aborted) return;
      renderWebhook(webhook);
    } catch (error) {
      if (context.signal.aborted) return;
      replace(header, pageHeader('Endpoint', { back: { label: 'Webhooks', to: 'webhooks' } }));
      replace(summary, alertBox(humanize(error, 'load the endpoint')));
      deliveriesCard.hidden = true;
    }
  };

  const loadDeliveries = async () => {
    try {
      deliveries = (await api.deliveries(id)).data;
      if (context.signal.aborted) return;
      renderDeliveries();
    } catch (error) {
      if (!context.signal.aborted && deliveries.length === 0) replace(deliveriesBody, alertBox(humanize(error, 'load the deliveries')));
    }
  };

  /** Polls while something is on its way, so a test's result shows up without a reload. */
  const schedule = () => {
    window.clearTimeout(timer);
    if (context.signal.aborted) return;
    const open = deliveries.some((d) => d.status === 'pending' || d.status === 'sending');
    if (!open && Date.now() > watchUntil) return;
    timer = window.setTimeout(() => {
      void Promise.all([loadDeliveries(), load()]).then(schedule);
    }, POLL_MS);
  };
  const watch = () => {
    watchUntil = Date.now() + WATCH_MS;
    void loadDeliveries().then(schedule);
  };

  const renderWebhook = (w: Webhook) => {
    const health = healthOf(w);
    const test = button('Send test event', {
      icon: 'send',
      onclick: () =>
        void busy(test, async () => {
          try {
            await api.testWebhook(w.id);
            toast('A webhook.test event is on its way. Its delivery shows below.', 'success', 'Test event queued');
            watch();
          } catch (error) {
            showError(error, 'send a test event');
          }
        }),
    });
    const toggle = button(w.enabled ? 'Pause' : 'Resume', {
      icon: w.enabled ? 'pause' : 'play',
      onclick: () =>
        void busy(toggle, async () => {
          if (w.enabled) {
            const ok = await confirmDialog({
              title: 'Pause this endpoint?',
              message: 'Deliveries waiting to be sent are canceled, and events observed while it is paused are never sent. You can resume it any time.',
              confirm: 'Pause endpoint',
            });
            if (!ok) return;
          }
          try {
            webhook = (await api.updateWebhook(w.id, { enabled: !w.enabled })).data;
            toast(w.enabled ? 'The endpoint is paused.' : 'The endpoint receives events observed from now on.', 'success', w.enabled ? 'Paused' : 'Resumed');
            renderWebhook(webhook);
            void loadDeliveries();
          } catch (error) {
            showError(error, w.enabled ? 'pause the endpoint' : 'resume the endpoint');
          }
        }),
    });
    const rotate = button('Rotate secret', {
      icon: 'rotate',
      onclick: () =>
        void busy(rotate, async () => {
          const ok = await confirmDialog({
            title: 'Rotate the signing secret?',
            message: 'A new secret signs every delivery from now on. For 24 hours deliveries also carry a signature made with the current secret, so you can switch over without dropping events.',
            confirm: 'Rotate secret',
          });
          if (!ok) return;
          try {
            const { data } = await api.rotateSecret(w.id);
            await revealSecret({ title: 'Your new signing secret', intro: 'Update your receiver with this secret within 24 hours.', value: data.secret, label: 'signing secret' });
            toast('The new secret is in use.', 'success', 'Secret rotated');
          } catch (error) {
            showError(error, 'rotate the secret');
          }
        }),
    });
    const remove = button('Delete', {
      icon: 'trash',
      variant: 'danger',
      onclick: () =>
        void busy(remove, async () => {
          const ok = await confirmDialog({
            title: 'Delete this endpoint?',
            message: 'It stops receiving events at once, and its delivery history is deleted. This cannot be undone.',
            confirm: 'Delete endpoint',
            danger: true,
          });
          if (!ok) return;
          try {
            await api.deleteWebhook(w.id);
            toast(`${shortUrl(w.url)} was deleted.`);
            navigate('webhooks');
          } catch (error) {
            showError(error, 'delete the endpoint');
          }
        }),
    });
    replace(
      header,
      pageHeader(w.description || shortUrl(w.url), {
        back: { label: 'Webhooks', to: 'webhooks' },
        description: h('span', { class: 'header-meta' }, healthBadge(w), h('code', { class: 'mono' }, urlText(w.url))),
        actions: [test, toggle, linkButton('Edit', `webhooks/${w.id}/edit`, { icon: 'edit' }), rotate, remove],
      }),
    );
    const filters = Object.entries(w.filters ?? {}).filter(([, value]) => value);
    replace(
      summary,
      card(
        { title: 'Configuration' },
        descriptionList([
          ['URL', h('code', { class: 'mono' }, urlText(w.url))],
          ['Events', h('div', { class: 'chips' }, w.event_types.map((t) => code(t)))],
          ['Filters', filters.length ? h('div', { class: 'chips' }, filters.map(([key, value]) => badge(`${key.replace('_', ' ')}: ${String(value)}`, 'blue'))) : h('span', { class: 'muted' }, 'None — every event of the chosen types')],
          ['Endpoint id', code(w.id)],
          ['Created', time(w.created_at)],
          ['Updated', time(w.updated_at)],
        ]),
      ),
      card(
        { title: 'Health', actions: [badge(health.label, health.tone, { dot: true })] },
        w.health
          ? descriptionList([
              ['Status', health.detail],
              ['Last success', time(w.health.last_success_at)],
              ['Last failure', time(w.health.last_failure_at)],
              ['Failed attempts in a row', number(w.health.consecutive_failures)],
              [
                'Deliveries',
                w.health.circuit === 'open'
                  ? `Backed off: the next attempt ${relative(w.health.circuit_retry_at)}, waiting ones use no attempts`
                  : w.health.circuit === 'half_open'
                    ? 'Backed off: one attempt is testing the endpoint'
                    : 'Sent as they come',
              ],
              ['Waiting deliveries', w.health.pending_deliveries ? `${number(w.health.pending_deliveries)} (oldest ${relative(w.health.oldest_pending_at)})` : 'None'],
            ])
          : h('p', { class: 'muted' }, 'No health figures yet.'),
        h(
          'p',
          { class: 'muted small signing-note' },
          icon('lock', 14),
          h('span', null, 'Deliveries are signed with this endpoint’s secret (Standard Webhooks). The secret is shown only when it is created or rotated.'),
        ),
      ),
    );
  };

  const renderDeliveries = () => {
    if (deliveries.length === 0) {
      return replace(
        deliveriesBody,
        emptyState({ icon: 'send', title: 'No deliveries yet', message: 'Events matching this endpoint appear here as they are sent. Send a test event to try your receiver.' }),
      );
    }
    replace(
      deliveriesBody,
      table<Delivery>(
        [
          { label: 'Status', cell: (d) => deliveryBadge(d) },
          { label: 'Event', cell: (d) => h('div', { class: 'cell-stack' }, code(d.event_type), h('span', { class: 'muted small mono' }, d.event_id)) },
          { label: 'Attempts', cell: (d) => `${d.attempts} of ${d.max_attempts}` },
          {
            label: 'Response',
            cell: (d) =>
              d.last_response_status !== null
                ? h('span', { class: ['http-status', d.last_response_status < 300 ? 'ok' : 'bad'] }, `HTTP ${d.last_response_status}`, d.last_duration_ms !== null ? h('span', { class: 'muted small' }, ` · ${d.last_duration_ms} ms`) : null)
                : d.last_error
                  ? h('span', { class: 'http-status bad' }, ERROR_TEXT[d.last_error] ?? d.last_error)
                  : h('span', { class: 'muted' }, '—'),
          },
          {
            label: 'Next attempt',
            cell: (d) => (d.status === 'pending' && d.next_attempt_at ? time(d.next_attempt_at) : h('span', { class: 'muted' }, '—')),
          },
          { label: 'Created', cell: (d) => time(d.created_at) },
          {
            label: 'Actions',
            class: 'cell-actions',
            cell: (d) =>
              h(
                'div',
                { class: 'row-actions' },
                button('View', { size: 'sm', variant: 'ghost', icon: 'eye', onclick: () => showDelivery(d), attrs: { 'aria-label': `View delivery ${d.event_type} ${d.id}` } }),
                retryable(d) ? retryButton(d) : null,
              ),
          },
        ],
        deliveries,
        { caption: 'Deliveries', rowAttrs: (d) => ({ dataset: { delivery: d.id, status: d.status, eventType: d.event_type } }) },
      ),
    );
  };

  const retryable = (d: Delivery) => d.status === 'failed' || (d.status === 'pending' && d.attempts > 0 && d.waiting_reason === null);

  const retryButton = (d: Delivery) => {
    const control = button('Retry', {
      size: 'sm',
      icon: 'refresh',
      onclick: () =>
        void busy(control, async () => {
          try {
            await api.retryDelivery(id, d.id);
            toast('The delivery is being sent again, with a new budget of six attempts.', 'success', 'Retry queued');
            watch();
          } catch (error) {
            showError(error, 'retry the delivery');
          }
        }),
      attrs: { 'aria-label': `Retry delivery ${d.id}` },
    });
    return control;
  };

  const showDelivery = (d: Delivery) => {
    openDialog({
      title: `${d.event_type} delivery`,
      wide: true,
      body: [
        h('div', { class: 'dialog-badges' }, deliveryBadge(d)),
        descriptionList([
          ['Delivery id', code(d.id)],
          ['Event id', code(d.event_id)],
          ['Attempts', `${d.attempts} of ${d.max_attempts}`],
          ['Last attempt', d.last_attempt_at ? dateTime(d.last_attempt_at) : '—'],
          ['Next attempt', d.status === 'pending' && d.next_attempt_at ? dateTime(d.next_attempt_at) : '—'],
          ['Response', d.last_response_status !== null ? `HTTP ${d.last_response_status}${d.last_duration_ms !== null ? ` in ${d.last_duration_ms} ms` : ''}` : '—'],
          ['Error', d.last_error ? `${ERROR_TEXT[d.last_error] ?? d.last_error} (${d.last_error})` : '—'],
          ...(d.waiting_reason
            ? [['Waiting for', d.waiting_reason === 'allowance' ? 'Monthly allowance (it goes out when the allowance resets or grows)' : 'Make maintenance'] as [string, Child]]
            : []),
        ]),
        h('h3', { class: 'section-title' }, 'Response body'),
        d.last_response_excerpt ? h('pre', { class: 'code-block', tabindex: '0' }, d.last_response_excerpt) : h('p', { class: 'muted small' }, 'No response body recorded.'),
        h('h3', { class: 'section-title' }, 'Payload'),
        h('pre', { class: 'code-block', tabindex: '0', dataset: { payload: '' } }, JSON.stringify(d.payload, null, 2)),
      ],
      actions: (close) => [retryable(d) ? retryButton(d) : null, button('Close', { variant: 'primary', onclick: close })],
    });
  };

  void load();
  void loadDeliveries().then(schedule);
  return root;
}

/** Sends every failed delivery of a time window again (after an outage longer than the retries). */
function recoverCard(id: string): HTMLElement {
  const localValue = (date: Date) => new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  const since = field('From', input('since', { type: 'datetime-local', value: localValue(new Date(Date.now() - 24 * 3600 * 1000)), required: true }));
  const until = field('Until', input('until', { type: 'datetime-local' }), { optional: true, hint: 'Empty means now. At most 14 days after From.' });
  const errors = new FormErrors({ since, until });
  const submit = button('Recover deliveries', { type: 'submit', icon: 'refresh' });
  const form = h('form', { class: 'form', novalidate: true }, errors.banner, h('div', { class: 'form-row' }, since.element, until.element), h('div', { class: 'form-actions form-actions-start' }, submit));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.clear();
    const from = since.control.value ? new Date(since.control.value) : null;
    const to = until.control.value ? new Date(until.control.value) : null;
    if (!from || Number.isNaN(from.getTime())) return errors.invalid('since', 'Choose when the outage started.');
    if (to && to <= from) return errors.invalid('until', 'Until must be after From.');
    void busy(submit, async () => {
      try {
        const { data } = await api.recover(id, from.toISOString(), to?.toISOString());
        toast(
          data.recovered === 0 ? 'No failed deliveries in that window.' : `${number(data.recovered)} failed deliver${data.recovered === 1 ? 'y is' : 'ies are'} being sent again.`,
          data.recovered === 0 ? 'info' : 'success',
          'Recovery',
        );
      } catch (error) {
        errors.show(error, 'recover the deliveries');
      }
    });
  });
  return card(
    { title: 'Recover after an outage', description: 'Was your receiver down for longer than the retries last? Send every failed delivery created in a time window again, with its original event id and payload.' },
    form,
  );
}
