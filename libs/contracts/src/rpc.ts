import { ErrorBody } from './errors';

/**
 * What a service replies to an RPC request: a value, or an error the gateway turns into the
 * HTTP error envelope with `status`.
 */
export type RpcReply<T> = { ok: true; value: T } | { ok: false; status: number; body: ErrorBody };

export const rpcOk = <T>(value: T): RpcReply<T> => ({ ok: true, value });
export const rpcError = (status: number, body: ErrorBody): RpcReply<never> => ({ ok: false, status, body });
