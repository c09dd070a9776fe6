import { QueryMessages } from './query.messages';
import { StatsMessages } from './stats.messages';
import { WebhooksMessages } from './webhooks.messages';

export * from './query.messages';
export * from './stats.messages';
export * from './webhooks.messages';

/** Pattern → {request, reply} for every RPC pattern of every service. */
export type RpcMessages = QueryMessages & StatsMessages & WebhooksMessages;
export type RpcPattern = keyof RpcMessages;
export type RpcRequest<P extends RpcPattern> = RpcMessages[P]['request'];
export type RpcResponse<P extends RpcPattern> = RpcMessages[P]['reply'];
