import type uPlot from 'uplot';
import { axis, barSeries, categoryAxis, chartHeight, mountChart } from './chart';
import { h } from '../lib/dom';
import { date, number } from '../lib/format';
import type { Usage } from '../lib/types';

/** The usage card's colors: requests in the accent, deliveries in teal (as the meter and legend). */
const COLORS = { requests: '#635bff', deliveries: '#14b8a6' };

/**
 * The billing period's usage per UTC day: API requests and webhook deliveries as stacked bars
 * (requests below). The element carries `data-days` and `data-total` for tests and a text
 * summary for screen readers.
 */
export function usageChart(daily: Usage['daily'], signal: AbortSignal): HTMLElement {
  const x = daily.map((_, index) => index);
  const requests = daily.map((d) => d.requests);
  const deliveries = daily.map((d) => d.deliveries);
  const totals = daily.map((d) => d.requests + d.deliveries);
  const label = (index: number, style: 'short' | 'long' = 'short') => dayLabel(daily[index]?.date ?? '', style);
  const total = totals.reduce((sum, v) => sum + v, 0);
  // Without a cursor on the chart the legend shows today (the last day), not dashes.
  const at = (index: number | null | undefined) => (index === null || index === undefined ? daily.length - 1 : index);
  const figure = (values: number[], index: number | null | undefined) => (values[at(index)] === undefined ? '—' : number(values[at(index)]!));
  /** One layer of the stacked bars; its legend reads `values` (the layer's own figures). */
  const stacked = (name: string, color: string, values: number[]) =>
    barSeries({ label: name, fill: color, width: 0, size: [0.7, 24], value: (_u, _value, _series, index) => figure(values, index) });

  const plot = h('div', { class: 'chart-canvas' });
  const used = daily.filter((d) => d.requests + d.deliveries > 0);
  const summary = h(
    'p',
    { class: 'visually-hidden' },
    used.length === 0
      ? 'No usage yet this billing period.'
      : `Units used per day: ${used.map((d) => `${date(d.date)}: ${number(d.requests)} requests, ${number(d.deliveries)} deliveries`).join('; ')}.`,
  );
  const element = h('figure', { class: 'chart chart-usage', dataset: { testid: 'usage-chart', days: String(daily.length), total: String(total) } }, plot, summary);

  // The whole month on the x axis: the days so far fill it from the left.
  const span = Math.max(daily.length, daysInMonth(daily[0]?.date));
  const options = (width: number): uPlot.Options => ({
    width,
    height: chartHeight(),
    padding: [12, 8, 0, 4],
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    legend: { live: true },
    scales: { x: { time: false, range: [-0.6, span - 0.4] }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] } },
    series: [
      { label: 'Day', value: (_u, _value, _series, index) => label(at(index), 'long') || '—' },
      // The total drawn first in the deliveries' color, requests over its lower part: stacked bars.
      stacked('Webhook deliveries', COLORS.deliveries, deliveries),
      stacked('API requests', COLORS.requests, requests),
    ],
    axes: [
      // A label every few days, fewer on a narrow chart.
      categoryAxis(x, (i, width) => (i % (width < 520 ? 7 : 3) === 0 ? label(i) : '')),
      axis({ grid: true, size: 52, values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? number(v) : '')) }),
    ],
  });
  mountChart(plot, element, options, [x, totals, requests], signal);
  return element;
}

/** Days in the month of a YYYY-MM-DD day (30 when there is none). */
function daysInMonth(day: string | undefined): number {
  if (!day) return 30;
  const [year, month] = day.split('-').map(Number);
  return new Date(Date.UTC(year!, month!, 0)).getUTCDate();
}

/** "Nov 3" (short) or "Nov 3, 2026" (long) of a YYYY-MM-DD day, in UTC. */
function dayLabel(day: string, style: 'short' | 'long'): string {
  if (style === 'long') return date(day);
  const value = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(value.getTime()) ? '' : value.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}
