import { alertBox, badge, button, card, code, emptyState, linkButton, pageHeader, skeleton, table, Tone, urlText } from '../components/ui';
import { api } from '../lib/api';
import { h, replace } from '../lib/dom';
import { isPaid, planInEffect, number, planName, relative } from '../lib/format';
import { humanize } from '../lib/messages';
import { href, PageContext } from '../lib/router';
import { session } from '../lib/session';
import type { Delivery, Webhook } from '../lib/types';

/** Pending work older than this counts as a backlog. */
const BACKLOG_AFTER_MS = 5 * 60 * 1000;

export interface HealthView {
  label: string;
  tone: Tone;
  detail: string;
  key: 'paused' | 'failing' | 'backlog' | 'healthy' | 'new';
}

export function healthOf(webhook: Webhook, now = Date.now()): HealthView {
  const health = webhook.health;
  if (!webhook.enabled) return { key: 'paused', label: 'Paused', tone: 'gray', detail: 'Not receiving events' };
  if (!health) return { key: 'new', label: 'Active', tone: 'green', detail: 'Receiving events' };
  if (health.consecutive_failures > 0) {
    return {
      key: 'failing',
      label: 'Failing',
      tone: 'red',
      detail: `${number(health.consecutive_failures)} failed attempt${health.consecutive_failures === 1 ? '' : 's'} since the last success`,
    };
  }
  const oldest = health.oldest_pending_at ? new Date(health.oldest_pending_at).getTime() : null;
  if (health.pending_deliveries > 0 && oldest !== null && now - oldest > BACKLOG_AFTER_MS) {
    return { key: 'backlog', label: 'Backlog', tone: 'amber', detail: `${number(health.pending_deliveries)} waiting since ${relative(health.oldest_pending_at)}` };
  }
  if (health.last_success_at) return { key: 'healthy', label: 'Healthy', tone: 'green', detail: `Last delivery ${relative(health.last_success_at)}` };
  return { key: 'new', label: 'Active', tone: 'green', detail: 'No deliveries yet' };
}

export function healthBadge(webhook: Webhook): HTMLElement {
  const view = healthOf(webhook);
  return h('span', { class: 'health', dataset: { health: view.key } }, badge(view.label, view.tone, { dot: true, title: view.detail }));
}

/** A failing endpoint can be backed up as well: say both. */
export function isBacklogged(webhook: Webhook, now = Date.now()): boolean {
  const health = webhook.health;
  if (!webhook.enabled || !health?.oldest_pending_at || health.pending_deliveries === 0) return false;
  return now - new Date(health.oldest_pending_at).getTime() > BACKLOG_AFTER_MS;
}

export const DELIVERY_TONES: Record<Delivery['status'], Tone> = {
  pending: 'blue',
  sending: 'violet',
  succeeded: 'green',
  failed: 'red',
  canceled: 'gray',
};

export function deliveryBadge(delivery: Delivery): HTMLElement {
  const label = delivery.status.charAt(0).toUpperCase() + delivery.status.slice(1);
  return badge(delivery.waiting_reason ? `Waiting (${delivery.waiting_reason})` : label, DELIVERY_TONES[delivery.status], { dot: true });
}

const PLAN_NOTICE_ID = 'webhooks-plan-notice';

/** Why webhooks are unavailable for the signed-in account, if they are. */
export function planNotice(): HTMLElement | null {
  const account = session.account;
  if (!account) return null;
  if (!isPaid(planInEffect(account))) {
    const notice = alertBox(
      { title: 'Webhooks come with paid plans', message: `You are on the ${planName(planInEffect(account))} plan. Endpoints can be created on the 1K (1 endpoint), 10K (10) and 100K (unlimited) plans.` },
      'info',
    );
    notice.id = PLAN_NOTICE_ID;
    return notice;
  }
  if (!account.email_verified) {
    return alertBox({ title: 'Verify your email address', message: 'Webhooks need a verified email address. Use the link we emailed you, or resend it from the Overview page.' }, 'warning');
  }
  return null;
}

/**
 * "Add endpoint": a link, or on the Free plan a disabled button that says why (the plan notice
 * above is its description).
 */
function addEndpoint(label: string): HTMLElement {
  const account = session.account;
  if (account && !isPaid(planInEffect(account))) {
    return button(label, {
      variant: 'primary',
      icon: 'plus',
      attrs: { disabled: true, title: 'Webhooks come with paid plans (1K, 10K, 100K)', 'aria-describedby': PLAN_NOTICE_ID },
    });
  }
  return linkButton(label, 'webhooks/new', { variant: 'primary', icon: 'plus' });
}

export function webhooksPage(context: PageContext): Node {
  const list = h('div', null, skeleton(4));
  const root = h(
    'div',
    { class: 'page' },
    pageHeader('Webhooks', {
      description: 'Signed HTTP POSTs to your endpoints when auctions are created, change, end, or receive bids (Standard Webhooks).',
      actions: [addEndpoint('Add endpoint')],
    }),
    planNotice(),
    card({ title: 'Endpoints' }, list),
  );
  void (async () => {
    try {
      const { data } = await api.webhooks();
      if (context.signal.aborted) return;
      if (data.length === 0) {
        return replace(
          list,
          emptyState({
            icon: 'webhook',
            title: 'No endpoints yet',
            message: 'Add an HTTPS endpoint to receive auction and bid events as they happen. Every delivery is signed and retried for up to a day.',
            action: addEndpoint('Add your first endpoint'),
          }),
        );
      }
      replace(
        list,
        table<Webhook>(
          [
            {
              label: 'Endpoint',
              cell: (w) =>
                h(
                  'div',
                  { class: 'cell-main' },
                  h('a', { class: 'strong-link mono', href: href(`webhooks/${w.id}`) }, urlText(w.url)),
                  w.description ? h('span', { class: 'muted small' }, w.description) : null,
                ),
            },
            {
              label: 'Status',
              cell: (w) =>
                h('div', { class: 'chips' }, healthBadge(w), healthOf(w).key === 'failing' && isBacklogged(w) ? badge('Backlog', 'amber', { title: 'Deliveries are waiting' }) : null),
            },
            { label: 'Events', cell: (w) => h('div', { class: 'chips' }, w.event_types.map((t) => code(t))) },
            {
              label: 'Health',
              cell: (w) => {
                const health = w.health;
                if (!health) return h('span', { class: 'muted' }, '—');
                return h(
                  'div',
                  { class: 'cell-stack small' },
                  h('span', null, healthOf(w).detail),
                  health.pending_deliveries > 0 ? h('span', { class: 'muted' }, `${number(health.pending_deliveries)} pending`) : null,
                );
              },
            },
          ],
          data,
          { caption: 'Webhook endpoints', rowAttrs: (w) => ({ dataset: { webhook: w.id } }) },
        ),
      );
    } catch (error) {
      if (!context.signal.aborted) replace(list, alertBox(humanize(error, 'load your endpoints')));
    }
  })();
  return root;
}
