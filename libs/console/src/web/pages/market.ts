import { field, FormErrors, input, select } from '../components/form';
import { icon } from '../components/icons';
import { trendChart } from '../components/trend-chart';
import { alertBox, busy, button, card, emptyState, pageHeader } from '../components/ui';
import { api } from '../lib/api';
import { h, replace } from '../lib/dom';
import { isPaid, planInEffect, monthLabel, number, percent, planName, usd, usdRange } from '../lib/format';
import { PageContext } from '../lib/router';
import { session } from '../lib/session';
import type { Stats } from '../lib/types';

export function marketPage(context: PageContext): Node {
  const make = field('Make', select('make', [{ value: '', label: 'Loading makes…' }]));
  const model = field('Model', select('model', [{ value: '', label: 'All models' }]), { optional: true });
  const yearMin = field('From year', input('year_min', { type: 'number', inputmode: 'numeric', min: '1885', max: '2100', placeholder: 'e.g. 1965' }), { optional: true });
  const yearMax = field('To year', input('year_max', { type: 'number', inputmode: 'numeric', min: '1885', max: '2100', placeholder: 'e.g. 1973' }), { optional: true });
  make.control.disabled = true;
  model.control.disabled = true;
  const errors = new FormErrors({ make, model, year_min: yearMin, year_max: yearMax });
  const submit = button('Show price trend', { type: 'submit', variant: 'primary', icon: 'chart' });
  const account = session.account;
  const form = h(
    'form',
    { class: 'form market-form', novalidate: true },
    errors.banner,
    h('div', { class: 'form-row form-row-4' }, make.element, model.element, yearMin.element, yearMax.element),
    h(
      'div',
      { class: 'form-actions form-actions-start' },
      submit,
      h('p', { class: 'muted small counted-note', id: 'counted-note' }, icon('info', 14), h('span', null, 'Each view counts as one /stats request against your monthly allowance, exactly like calling the API.')),
    ),
  );
  submit.setAttribute('aria-describedby', 'counted-note');
  const result = h(
    'div',
    { class: 'market-result', 'aria-live': 'polite' },
    emptyState({ icon: 'chart', title: 'Pick a make to see its market', message: 'Sales volume and prices over the last 12 months, from completed auctions on seven platforms, in USD.' }),
  );
  const root = h(
    'div',
    { class: 'page' },
    pageHeader('Market', { description: 'Pricing statistics with a 12-month trend, the same figures GET /stats returns.' }),
    account && !isPaid(planInEffect(account))
      ? alertBox({ title: 'Pricing statistics come with paid plans', message: `You are on the ${planName(planInEffect(account))} plan. The 1K, 10K and 100K plans include /stats and this view.` }, 'info')
      : null,
    card({}, form),
    result,
  );

  void api
    .makes()
    .then((makes) => {
      if (context.signal.aborted) return;
      replace(make.control, h('option', { value: '' }, 'Choose a make'), makes.map((m) => h('option', { value: m }, m)));
      make.control.disabled = false;
      const wanted = context.query.get('make');
      if (wanted && makes.includes(wanted)) {
        make.control.value = wanted;
        void loadModels(context.query.get('model'));
      }
    })
    .catch((error: unknown) => errors.show(error, 'load the makes'));

  const loadModels = async (preselect: string | null = null) => {
    const chosen = make.control.value;
    replace(model.control, h('option', { value: '' }, 'All models'));
    model.control.disabled = true;
    if (!chosen) return;
    try {
      const models = await api.models(chosen);
      if (context.signal.aborted || make.control.value !== chosen) return;
      model.control.append(...models.map((m) => h('option', { value: m, selected: m === preselect }, m)));
      model.control.disabled = models.length === 0;
    } catch (error) {
      errors.show(error, 'load the models');
    }
  };
  make.control.addEventListener('change', () => void loadModels());

  let view = new AbortController();
  context.signal.addEventListener('abort', () => view.abort());

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.clear();
    if (!make.control.value) return errors.invalid('make', 'Choose a make.');
    const min = yearMin.control.value ? Number(yearMin.control.value) : undefined;
    const max = yearMax.control.value ? Number(yearMax.control.value) : undefined;
    if (min !== undefined && max !== undefined && min > max) return errors.invalid('year_max', 'To year must not be before From year.');
    const query = { make: make.control.value, model: model.control.value || undefined, year_min: min, year_max: max };
    void busy(submit, async () => {
      try {
        const stats = await api.stats(query);
        if (context.signal.aborted) return;
        view.abort();
        view = new AbortController();
        const params = new URLSearchParams({ make: query.make, ...(query.model ? { model: query.model } : {}) });
        history.replaceState(null, '', `${location.pathname}?${params.toString()}`);
        replace(result, renderStats(stats, [query.make, query.model].filter(Boolean).join(' '), view.signal));
      } catch (error) {
        const human = errors.show(error, 'load the statistics');
        if (human.plan) replace(result);
      }
    });
  });
  return root;
}

function renderStats(stats: Stats, scope: string, signal: AbortSignal): Node {
  const trend = stats.price_trend;
  const range = trend.length ? `${monthLabel(trend[0]?.date ?? '', 'long')} – ${monthLabel(trend[trend.length - 1]?.date ?? '', 'long')}` : '';
  const tile = (label: string, value: string, note?: string) =>
    h('div', { class: 'stat' }, h('span', { class: 'stat-label' }, label), h('span', { class: 'stat-value' }, value), note ? h('span', { class: 'stat-note' }, note) : null);
  if (stats.total_sales === 0) {
    return emptyState({ icon: 'chart', title: `No sales of ${scope} yet`, message: 'There are no completed sales with a price in this selection. Try another model or a wider year range.' });
  }
  return h(
    'div',
    { class: 'market-stats' },
    h(
      'div',
      { class: 'stats-grid' },
      tile('Sales', number(stats.total_sales), 'all time, priced'),
      tile('Median price', usd(stats.median_price)),
      tile('Average price', usd(stats.average_price)),
      tile('Range', usdRange(stats.lowest_price, stats.highest_price)),
      tile('Sell-through', percent(stats.sell_through_rate), 'sold ÷ completed'),
    ),
    card({ title: `${scope}: 12-month trend`, description: `${range} · monthly average sale price, median of all sales, and number of sales (USD)`, class: 'chart-card' }, trendChart(stats, signal)),
  );
}
