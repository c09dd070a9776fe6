import { StatsQueryDto, StatsResponse } from '../dto';
import { StatsPatterns } from '../patterns';

/** Request and reply types of every stats-service pattern, checked by the compiler on both ends. */
export interface StatsMessages {
  /** The validated query of GET /stats; validated again on consume. */
  [StatsPatterns.GetPriceStats]: { request: StatsQueryDto; reply: StatsResponse };
}
