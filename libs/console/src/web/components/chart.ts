import uPlot from 'uplot';

/** What every console chart shares: the axis look and the font. */
export const CHART_STYLE = {
  grid: '#eef0f4',
  axis: '#6b7280',
  font: '12px -apple-system, "Segoe UI", Roboto, Arial, "Liberation Sans", sans-serif',
} as const;

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
