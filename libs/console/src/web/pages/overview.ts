import { icon } from '../components/icons';
import { toast } from '../components/toast';
import { alertBox, badge, busy, button, card, descriptionList, emailText, linkButton, pageHeader, skeleton } from '../components/ui';
import { api } from '../lib/api';
import { h, replace } from '../lib/dom';
import { date, dateTime, isPaid, number, planInEffect, planName, PLANS, relative } from '../lib/format';
import { humanize } from '../lib/messages';
import { PageContext } from '../lib/router';
import { session } from '../lib/session';
import type { Account, Overview, PlanId } from '../lib/types';
import { usageChart } from '../components/usage-chart';

/** The plan the API says is in effect (an expired paid plan is Free), else the account's. */
function effectivePlan(overview: Overview): PlanId {
  if (overview.plan?.id) return overview.plan.id;
  return planInEffect(overview.account);
}

export function overviewPage(context: PageContext): Node {
  const content = h('div', { class: 'grid grid-overview' }, card({ title: 'Usage this month' }, skeleton(4)), card({ title: 'Plan' }, skeleton(3)));
  const root = h('div', { class: 'page' }, pageHeader('Overview', { description: 'Your plan, this month’s usage and the state of your account.' }), content);

  const load = async () => {
    try {
      const [overview, keys, webhooks] = await Promise.all([
        api.overview(),
        api.keys().then((r) => r.data.some((key) => !key.revoked_at), () => false),
        api.webhooks().then((r) => r.data.length > 0, () => false),
      ]);
      if (context.signal.aborted) return;
      session.update(overview.account);
      replace(content, ...render(overview, { keys, webhooks }, load, context.signal));
    } catch (error) {
      if (context.signal.aborted) return;
      replace(content, alertBox(humanize(error, 'load your overview'), 'error', button('Try again', { icon: 'refresh', onclick: () => void load() })));
    }
  };
  void load();
  return root;
}

interface Progress {
  keys: boolean;
  webhooks: boolean;
}

function render(overview: Overview, progress: Progress, reload: () => Promise<void>, signal: AbortSignal): Node[] {
  const { account, usage, billing_period: period } = overview;
  const plan = effectivePlan(overview);
  const allowance = usage.allowance || PLANS[plan].limit;
  const ratio = (value: number) => `${Math.min(100, (value / Math.max(1, allowance)) * 100).toFixed(2)}%`;
  const left = Math.max(0, allowance - usage.used);
  const nearlyOut = usage.used / Math.max(1, allowance) >= 0.9;

  const meter = h(
    'div',
    {
      class: 'meter',
      role: 'meter',
      'aria-label': 'Monthly allowance used',
      'aria-valuemin': '0',
      'aria-valuemax': String(allowance),
      'aria-valuenow': String(Math.min(usage.used, allowance)),
      'aria-valuetext': `${number(usage.used)} of ${number(allowance)} used`,
      dataset: { used: String(usage.used), allowance: String(allowance) },
    },
    // A sliver stays visible for the first few units of a large allowance.
    h('div', { class: 'meter-fill meter-requests', style: { width: ratio(usage.requests), minWidth: usage.requests > 0 ? '4px' : '0' } }),
    h('div', { class: 'meter-fill meter-deliveries', style: { width: ratio(usage.deliveries), minWidth: usage.deliveries > 0 ? '4px' : '0' } }),
  );

  const usageCard = card(
    {
      title: 'Usage this month',
      description: `Billing period ${date(period.start)} – ${date(previousDay(period.end))} (UTC)`,
      class: 'card-usage',
    },
    h(
      'div',
      { class: 'usage-headline' },
      h('span', { class: 'usage-used', dataset: { testid: 'usage-used' } }, number(usage.used)),
      h('span', { class: 'usage-of' }, `of ${number(allowance)} units used`),
      nearlyOut ? badge(usage.used >= allowance ? 'Allowance used up' : 'Almost used up', 'amber', { dot: true }) : null,
    ),
    meter,
    h(
      'ul',
      { class: 'legend' },
      h('li', null, h('span', { class: 'swatch swatch-requests', 'aria-hidden': 'true' }), 'API requests', h('strong', null, number(usage.requests))),
      h('li', null, h('span', { class: 'swatch swatch-deliveries', 'aria-hidden': 'true' }), 'Webhook deliveries', h('strong', null, number(usage.deliveries))),
      h('li', null, h('span', { class: 'swatch swatch-left', 'aria-hidden': 'true' }), 'Remaining', h('strong', null, number(left))),
    ),
    h(
      'p',
      { class: 'muted small usage-reset' },
      icon('clock', 14),
      h('span', null, `Resets ${relative(usage.resets_at)} — ${dateTime(usage.resets_at)}. Counted: successful data requests (/auctions, /stats…) and delivered webhook events. Tests and management calls are free.`),
    ),
  );

  const expires = account.plan_expires_at;
  const planCard = card(
    {
      title: 'Plan',
      actions: [badge(planName(plan), isPaid(plan) ? 'violet' : 'gray')],
    },
    h('p', { class: 'plan-name' }, `${planName(plan)} plan`),
    h('p', { class: 'muted' }, `${number(PLANS[plan].limit)} units a month${isPaid(plan) ? ' · pricing statistics · webhooks' : ' · search and bid history'}`),
    overview.plan?.expired && expires
      ? alertBox({ title: `Your ${planName(account.plan)} plan ended`, message: `It lapsed on ${dateTime(expires)}; the account is on the Free plan until it is renewed.` }, 'warning')
      : null,
    descriptionList([
      ['Plan ends', expires ? dateTime(expires) : isPaid(plan) ? 'No end date' : '—'],
      ['Webhook endpoints', endpoints(overview, plan)],
      ['Burst limit', '10 requests/s, bursts of 20'],
      ['Email', h('span', { class: 'cell-stack' }, emailText(account.email, 'strong'), account.email_verified ? badge('Verified', 'green', { dot: true }) : badge('Not verified', 'amber', { dot: true }))],
    ]),
    plan === 'free'
      ? h('p', { class: 'muted small' }, 'Need pricing statistics or webhooks? Ask us to move you to the 1K, 10K or 100K plan.')
      : null,
  );

  const historyCard = card(
    { title: 'Daily usage', description: 'Units used each day of this billing period (UTC): API requests and webhook deliveries.', class: 'card-wide' },
    usageChart(usage.daily, signal),
  );

  return [...(account.email_verified ? [] : [verificationBanner(account, reload)]), usageCard, planCard, historyCard, gettingStarted(account, plan, progress)];
}

function endpoints(overview: Overview, plan: PlanId): string {
  const allowed = overview.plan && 'webhook_endpoints' in overview.plan ? overview.plan.webhook_endpoints : ENDPOINTS[plan];
  if (allowed === null || allowed === undefined) return 'Unlimited';
  return allowed === 0 ? 'None (paid plans only)' : `Up to ${number(allowed)}`;
}

const ENDPOINTS: Record<PlanId, number | null> = { free: 0, '1k': 1, '10k': 10, '100k': null };

/** The end of the period is the first instant of the next one; show its last day. */
function previousDay(iso: string): string {
  const value = new Date(iso);
  value.setUTCDate(value.getUTCDate() - 1);
  return value.toISOString();
}

/** Where a verification link went, in words: the server says whether it mailed it or only logged it. */
function verificationWhere(email: string, via: 'email' | 'log'): HTMLElement {
  return via === 'log'
    ? h('span', null, "This server sends no email (SMTP_URL is not set): the link is in the server's log, on the line “Email verification for ", emailText(email), ': open …”.')
    : h('span', null, 'We emailed a link to ', emailText(email), '.');
}

/** Shown until the address is verified: what to do, and a way to get a fresh link. */
function verificationBanner(account: Account, reload: () => Promise<void>): HTMLElement {
  const resend = button('Resend the link', {
    icon: 'mail',
    size: 'sm',
    onclick: () =>
      void busy(resend, async () => {
        try {
          const { verification_email: sent } = await api.resendVerification();
          if (sent === 'failed') toast('The mail server refused it. Try again in a minute.', 'error', 'Email not sent');
          else toast(verificationWhere(account.email, sent === 'logged' ? 'log' : 'email').textContent ?? '', 'success', sent === 'logged' ? 'New link written to the server log' : 'Verification email sent');
        } catch (error) {
          const human = humanize(error, 'send the email');
          toast(human.message, 'error', human.title);
        }
      }),
  });
  const done = button('I have verified it', { variant: 'ghost', size: 'sm', icon: 'refresh', onclick: () => void busy(done, reload) });
  return h(
    'div',
    { class: 'card-wide', dataset: { testid: 'verify-banner' } },
    alertBox(
      {
        title: 'Verify your email address',
        message: h(
          'span',
          null,
          verificationWhere(account.email, session.verificationEmailVia),
          ' Open it to confirm the address: webhooks need a verified address. The link works once and expires after 24 hours.',
        ),
      },
      'warning',
      h('div', { class: 'alert-actions' }, resend, done),
    ),
  );
}

function gettingStarted(account: Account, plan: PlanId, progress: Progress): HTMLElement {
  const step = (done: boolean, title: string, text: string, to: string | null, action: string) =>
    h(
      'li',
      { class: ['step', done && 'step-done'] },
      h('span', { class: 'step-mark', 'aria-hidden': 'true' }, done ? icon('check', 14) : null),
      h('div', { class: 'step-text' }, h('strong', null, title, done ? h('span', { class: 'visually-hidden' }, ' (done)') : null), h('span', { class: 'muted small' }, text)),
      done || to === null ? null : linkButton(action, to, { size: 'sm' }),
    );
  return card(
    { title: 'Get started', class: 'card-wide' },
    h(
      'ol',
      { class: 'steps' },
      step(account.email_verified, 'Verify your email address', session.verificationEmailVia === 'log' ? "Needed for webhooks. Open the link printed in the server's log." : 'Needed for webhooks. Use the link in the email we sent you.', null, ''),
      step(progress.keys, 'Create an API key', 'Send it as Authorization: Bearer <key> to /auctions, /stats and the rest.', 'keys', 'Create a key'),
      isPaid(plan)
        ? step(progress.webhooks, 'Subscribe an endpoint', 'Receive signed auction and bid events as they happen.', 'webhooks/new', 'Add an endpoint')
        : step(progress.webhooks, 'Subscribe an endpoint', 'Webhooks come with paid plans (1K, 10K, 100K).', null, ''),
      step(false, 'Explore the market', isPaid(plan) ? 'A 12-month price trend for any make and model.' : 'Pricing statistics come with paid plans.', 'market', 'Open Market'),
    ),
    h('p', { class: 'muted small' }, 'Full reference: ', h('a', { href: '/docs' }, 'API documentation'), '.'),
  );
}
