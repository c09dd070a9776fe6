import 'reflect-metadata';
import { Queues } from '@cars/contracts';
import { exitOnBootFailure, runRpcService } from '@cars/runtime';
import { QueryModule } from '@cars/service-query';

runRpcService({ name: 'query', queue: Queues.QueryRpc, module: QueryModule, readOnly: true }).catch(exitOnBootFailure);
