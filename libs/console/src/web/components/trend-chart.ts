import uPlot from 'uplot';
import { axis, categoryAxis, chartHeight, mountChart } from './chart';
import { h } from '../lib/dom';
import { monthLabel, number, usd } from '../lib/format';
import type { Stats } from '../lib/types';

const COLORS = {
  average: '#635bff',
  median: '#0e9f6e',
  volume: 'rgba(99, 91, 255, 0.16)',
  volumeStroke: 'rgba(99, 91, 255, 0.35)',
};

/**
 * The 12-month trend: the monthly average sale price (line), the median of every sale in scope
 * (dashed reference line) and the monthly number of sales (bars on their own axis). uPlot draws on
 * a canvas; the element carries `data-points` (months with sales) for tests and a text summary for
 * screen readers.
 */
export function trendChart(stats: Stats, signal: AbortSignal): HTMLElement {
  const trend = stats.price_trend;
  const labels = trend.map((p) => monthLabel(p.date));
  const x = trend.map((_, index) => index);
  const average = trend.map((p) => (p.volume > 0 ? p.avg_price : null));
  const volume = trend.map((p) => p.volume);
  const median = trend.map(() => (stats.total_sales > 0 ? stats.median_price : null));
  const points = average.filter((v) => v !== null).length;
  // Without a cursor on the chart the legend shows the latest month with sales, not dashes.
  const latest = average.reduce<number>((last, value, index) => (value === null ? last : index), Math.max(0, trend.length - 1));
  const at = (index: number | null | undefined) => (index === null || index === undefined ? latest : index);

  const plot = h('div', { class: 'chart-canvas' });
  const summary = h(
    'p',
    { class: 'visually-hidden' },
    `Monthly average sale price and number of sales, ${monthLabel(trend[0]?.date ?? '', 'long')} to ${monthLabel(trend[trend.length - 1]?.date ?? '', 'long')}: ` +
      trend.map((p) => `${monthLabel(p.date, 'long')}: ${p.volume > 0 ? `${usd(p.avg_price)} average over ${number(p.volume)} sales` : 'no sales'}`).join('; ') +
      '.',
  );
  const element = h(
    'figure',
    { class: 'chart', dataset: { points: String(points), series: 'average,median,volume', months: String(trend.length) } },
    plot,
    summary,
  );

  const build = (width: number): uPlot.Options => {
    const options: uPlot.Options = {
      width,
      height: chartHeight(),
      padding: [12, 4, 0, 4],
      cursor: { drag: { x: false, y: false }, points: { size: 8 } },
      legend: { live: true },
      scales: { x: { time: false, range: [-0.6, Math.max(0, trend.length - 1) + 0.6] }, usd: { auto: true, range: (_u, _min, max) => [0, niceMax(max)] }, vol: { range: (_u, _min, max) => [0, Math.max(4, max * 1.25)] } },
      series: [
        { label: 'Month', value: (_u, _value, _series, index) => monthLabel(trend[at(index)]?.date ?? '', 'long') },
        {
          label: 'Average price',
          scale: 'usd',
          stroke: COLORS.average,
          width: 2.5,
          points: { show: true, size: 7, fill: '#fff', stroke: COLORS.average },
          spanGaps: true,
          value: (_u, _value, _series, index) => orDash(average[at(index)], usd),
        },
        {
          label: 'Median (all sales)',
          scale: 'usd',
          stroke: COLORS.median,
          width: 1.5,
          dash: [6, 5],
          points: { show: false },
          value: (_u, _value, _series, index) => orDash(median[at(index)], usd),
        },
        {
          label: 'Sales',
          scale: 'vol',
          fill: COLORS.volume,
          stroke: COLORS.volumeStroke,
          width: 1,
          paths: uPlot.paths.bars?.({ size: [0.55, 48], align: 0 }),
          points: { show: false },
          value: (_u, _value, _series, index) => orDash(volume[at(index)], number),
        },
      ],
      axes: [
        categoryAxis(x, (i, width) => (width < 520 && i % 2 === 1 ? '' : (labels[i] ?? ''))),
        axis({ scale: 'usd', grid: true, size: 64, values: (_u, splits) => splits.map((v) => usd(v, { compact: true })) }),
        axis({ scale: 'vol', side: 1, size: 44, values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? number(v) : '')) }),
      ],
    };
    return options;
  };
  mountChart(plot, element, build, [x, average, median, volume], signal);
  return element;
}

function orDash(value: number | null | undefined, format: (value: number) => string): string {
  return value === null || value === undefined ? '—' : format(value);
}

function niceMax(max: number): number {
  if (!Number.isFinite(max) || max <= 0) return 1000;
  const padded = max * 1.15;
  const magnitude = 10 ** Math.floor(Math.log10(padded));
  return Math.ceil(padded / magnitude) * magnitude;
}
