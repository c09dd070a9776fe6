import uPlot from 'uplot';

/** What every console chart shares: the axis look and the font. */
export const CHART_STYLE = {
  grid: '#eef0f4',
  axis: '#6b7280',
  font: '12px -apple-system, "Segoe UI", Roboto, Arial, "Liberation Sans", sans-serif',
} as const;

/** An axis in the console's look: no ticks, grid lines only where asked (`grid: true`). */
export function axis(options: Omit<uPlot.Axis, 'grid'> & { grid?: boolean }): uPlot.Axis {
  const { grid, ...rest } = options;
  return {
    stroke: CHART_STYLE.axis,
    grid: grid ? { stroke: CHART_STYLE.grid, width: 1 } : { show: false },
    ticks: { show: false },
    font: CHART_STYLE.font,
    ...rest,
  };
}

/** The x axis of a category chart: one split per point, labelled by `label` (blank to skip). */
export function categoryAxis(x: number[], label: (index: number, width: number) => string): uPlot.Axis {
  return axis({ splits: () => x, values: (u, splits) => splits.map((i) => label(i, u.width)) });
}

/** A bar series (uPlot's bars path) with a number formatter for the legend. */
export function barSeries(options: uPlot.Series & { size: [number, number] }): uPlot.Series {
  const { size, ...rest } = options;
  return { paths: uPlot.paths.bars?.({ size, align: 0 }), points: { show: false }, ...rest };
}

/** 240 px high on a phone, 320 px otherwise. */
export function chartHeight(): number {
  return window.matchMedia('(max-width: 640px)').matches ? 240 : 320;
}

/**
 * Draws a uPlot chart into `plot` once it is in the document (uPlot needs a width), resizes it
 * when that width changes, and destroys it when `signal` aborts (the page is left). `options`
 * gets the width to draw at.
 */
export function mountChart(plot: HTMLElement, fallback: HTMLElement, options: (width: number) => uPlot.Options, data: uPlot.AlignedData, signal: AbortSignal): void {
  let chart: uPlot | null = null;
  const width = () => Math.max(280, Math.floor(plot.clientWidth || fallback.clientWidth || 600));
  let lastWidth = 0;
  const observer = new ResizeObserver(() => {
    const next = width();
    if (!chart) {
      lastWidth = next;
      chart = new uPlot(options(next), data, plot);
    } else if (Math.abs(next - lastWidth) > 2) {
      lastWidth = next;
      chart.setSize({ width: next, height: chartHeight() });
      chart.redraw(false, true);
    }
  });
  observer.observe(plot);
  signal.addEventListener('abort', () => {
    observer.disconnect();
    chart?.destroy();
  });
}
