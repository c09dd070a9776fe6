import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long clients and shared caches may reuse a make or model list without asking again. */
export const NAME_LIST_CACHE_CONTROL = 'public, max-age=300, stale-while-revalidate=3600';

/** A strong validator of exactly these response bytes. */
export function entityTag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** RFC 9110 §13.1.2: `*`, or a list of (weak or strong) tags compared weakly. */
export function ifNoneMatchMatches(header: string | string[] | undefined, tag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  return value.split(',').some((candidate) => opaque(candidate) === opaque(tag));
}

/** Sends a JSON body with ETag and Cache-Control, or 304 without a body when the client has it. */
export async function sendCacheable(request: FastifyRequest, reply: FastifyReply, value: unknown): Promise<void> {
  const body = JSON.stringify(value);
  const tag = entityTag(body);
  void reply.header('etag', tag).header('cache-control', NAME_LIST_CACHE_CONTROL).header('vary', 'accept-encoding');
  if (ifNoneMatchMatches(request.headers['if-none-match'], tag)) {
    await reply.status(304).send();
    return;
  }
  await reply.status(200).type('application/json; charset=utf-8').send(body);
}
