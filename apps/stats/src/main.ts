import 'reflect-metadata';
import { Queues } from '@cars/contracts';
import { exitOnBootFailure, runRpcService } from '@cars/runtime';
import { StatsModule } from '@cars/service-stats';

runRpcService({ name: 'stats', queue: Queues.StatsRpc, module: StatsModule, readOnly: true }).catch(exitOnBootFailure);
