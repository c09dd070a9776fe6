/** What row building needs to know about a platform (loaded with the reference tables: reference-cache.ts). */
export interface SourceContext {
  id: string;
  /** IANA zone of the platform's wall-clock times. */
  timezone: string;
  /** Unsold cars show only the high bid ("Bid to $X"): `reserve not met` maps to REST `bid to`. */
  unsoldReportsHighBidOnly: boolean;
  /** Main currency of the platform (price_usd of an observation without a currency). */
  defaultCurrency: string | null;
}
