import { InitialSchema1763700000000 } from './1763700000000-InitialSchema';
import { ChangeDetection1763800000000 } from './1763800000000-ChangeDetection';
import { QueryIndexes1763900000000 } from './1763900000000-QueryIndexes';
import { Accounts1764000000000 } from './1764000000000-Accounts';
import { StatsRollups1764100000000 } from './1764100000000-StatsRollups';
import { DescriptionTokens1764200000000 } from './1764200000000-DescriptionTokens';
import { OutboxPayloadText1764300000000 } from './1764300000000-OutboxPayloadText';
import { StatisticsScope1764400000000 } from './1764400000000-StatisticsScope';
import { Webhooks1764500000000 } from './1764500000000-Webhooks';
import { ReferenceChangeNotify1764600000000 } from './1764600000000-ReferenceChangeNotify';
import { AccountChangeNotify1764650000000 } from './1764650000000-AccountChangeNotify';
import { IngestOutcomes1764660000000 } from './1764660000000-IngestOutcomes';
import { DeliveryWorker1764700000000 } from './1764700000000-DeliveryWorker';
import { DeliveryHealthIndex1764710000000 } from './1764710000000-DeliveryHealthIndex';
import { EventListedMake1764720000000 } from './1764720000000-EventListedMake';
import { AccountArea1764800000000 } from './1764800000000-AccountArea';
import { DeliveryFairness1764910000000 } from './1764910000000-DeliveryFairness';
import { DeliveriesDueWakeup1765000000000 } from './1765000000000-DeliveriesDueWakeup';
import { UsageDaily1765050000000 } from './1765050000000-UsageDaily';
import { UsageLeases1765100000000 } from './1765100000000-UsageLeases';
import { DeliveryWriteCost1765150000000 } from './1765150000000-DeliveryWriteCost';

/** Every migration, in order. Add new ones here (files: {timestamp}-{PascalCaseName}.ts). */
export const MIGRATIONS = [
  InitialSchema1763700000000,
  ChangeDetection1763800000000,
  QueryIndexes1763900000000,
  Accounts1764000000000,
  StatsRollups1764100000000,
  DescriptionTokens1764200000000,
  OutboxPayloadText1764300000000,
  StatisticsScope1764400000000,
  Webhooks1764500000000,
  ReferenceChangeNotify1764600000000,
  AccountChangeNotify1764650000000,
  IngestOutcomes1764660000000,
  DeliveryWorker1764700000000,
  DeliveryHealthIndex1764710000000,
  EventListedMake1764720000000,
  AccountArea1764800000000,
  DeliveryFairness1764910000000,
  DeliveriesDueWakeup1765000000000,
  UsageDaily1765050000000,
  UsageLeases1765100000000,
  DeliveryWriteCost1765150000000,
];
