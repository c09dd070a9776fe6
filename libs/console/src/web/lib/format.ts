import type { Account, PlanId } from './types';

const LOCALE = 'en-US';

export const PLANS: Record<PlanId, { name: string; limit: number }> = {
  free: { name: 'Free', limit: 100 },
  '1k': { name: '1K', limit: 1_000 },
  '10k': { name: '10K', limit: 10_000 },
  '100k': { name: '100K', limit: 100_000 },
};

export function planName(plan: PlanId | string): string {
  return (PLANS as Record<string, { name: string }>)[plan]?.name ?? plan;
}

/** The plan in effect: a paid plan whose `plan_expires_at` has passed is Free (as the API judges it). */
export function planInEffect(account: Pick<Account, 'plan' | 'plan_expires_at'>): PlanId {
  if (account.plan_expires_at && new Date(account.plan_expires_at).getTime() <= Date.now()) return 'free';
  return account.plan;
}

export function isPaid(plan: PlanId | string): boolean {
  return plan === '1k' || plan === '10k' || plan === '100k';
}

export function number(value: number): string {
  return value.toLocaleString(LOCALE);
}

export function usd(value: number, options: { compact?: boolean } = {}): string {
  return new Intl.NumberFormat(LOCALE, {
    style: 'currency',
    currency: 'USD',
    maximumFractionDigits: options.compact && Math.abs(value) >= 10_000 ? 1 : 0,
    notation: options.compact && Math.abs(value) >= 10_000 ? 'compact' : 'standard',
  }).format(value);
}

/** "$9.9K – $527.5K": both ends in one format, compact when the larger end needs it. */
export function usdRange(low: number, high: number): string {
  const compact = Math.max(Math.abs(low), Math.abs(high)) >= 10_000;
  const format = (value: number) =>
    new Intl.NumberFormat(LOCALE, { style: 'currency', currency: 'USD', notation: compact ? 'compact' : 'standard', maximumFractionDigits: compact ? 1 : 0 }).format(value);
  return `${format(low)} – ${format(high)}`;
}

export function percent(ratio: number): string {
  return new Intl.NumberFormat(LOCALE, { style: 'percent', maximumFractionDigits: 1 }).format(ratio);
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  return date.toLocaleString(LOCALE, { month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function date(iso: string | null | undefined): string {
  if (!iso) return '—';
  const value = new Date(iso);
  if (Number.isNaN(value.getTime())) return '—';
  return value.toLocaleDateString(LOCALE, { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** "3 minutes ago", "in 2 hours", "just now". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const at = new Date(iso).getTime();
  if (Number.isNaN(at)) return '—';
  const seconds = Math.round((at - now) / 1000);
  if (Math.abs(seconds) < 10) return 'just now';
  const format = new Intl.RelativeTimeFormat(LOCALE, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') return format.format(Math.round(seconds / size), unit);
  }
  return '—';
}

/** "2025-12" → "Dec 2025" (long) or "Dec" (short). */
export function monthLabel(yyyyMm: string, style: 'short' | 'long' = 'short'): string {
  const [year, month] = yyyyMm.split('-').map(Number);
  if (!year || !month) return yyyyMm;
  const value = new Date(Date.UTC(year, month - 1, 1));
  return value.toLocaleDateString(LOCALE, style === 'long' ? { month: 'short', year: 'numeric', timeZone: 'UTC' } : { month: 'short', timeZone: 'UTC' });
}

/** The host and path of a URL, for compact display. */
export function shortUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return url;
  }
}
