import 'reflect-metadata';
import { Queues } from '@cars/contracts';
import { exitOnBootFailure, runRpcService } from '@cars/runtime';
import { WebhooksModule } from '@cars/service-webhooks';

runRpcService({ name: 'webhooks', queue: Queues.WebhooksRpc, module: WebhooksModule }).catch(exitOnBootFailure);
