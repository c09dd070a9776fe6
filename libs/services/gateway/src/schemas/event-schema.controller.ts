import { createHash } from 'node:crypto';
import { Controller, Get, Header, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EVENT_SCHEMA } from '@cars/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiValidationError } from '../auctions/api-responses';
import { ApiNoCredentials, Public } from '../auth/auth.decorators';

/** The route of the event catalog's schema (stable: docs, the console and receivers link to it). */
export const EVENT_SCHEMA_PATH = '/schemas/events.json';

const BODY = JSON.stringify(EVENT_SCHEMA);
const ETAG = `"${createHash('sha256').update(BODY).digest('base64url').slice(0, 27)}"`;

/**
 * `GET /schemas/events.json`: the JSON Schema of every webhook event type, generated from the
 * event contract (docs/api/events.md). Public, never metered; cacheable for an hour and revalidated
 * by its ETag.
 */
@ApiTags('Webhooks')
@Public()
@ApiNoCredentials()
@Controller('schemas')
export class EventSchemaController {
  @Get('events.json')
  @Header('Cache-Control', 'public, max-age=3600')
  @ApiOperation({
    summary: 'The webhook event catalog as JSON Schema',
    description:
      'The JSON Schema (draft 2020-12) of every webhook event body: one definition per event type under `$defs` with a sample in ' +
      '`examples`. No API key, not counted; cacheable (ETag).',
  })
  @ApiOkResponse({ description: 'The schema.', content: { 'application/schema+json': { schema: { type: 'object' } } } })
  @ApiValidationError()
  eventSchema(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    void reply.header('ETag', ETAG);
    if (request.headers['if-none-match'] === ETAG) {
      void reply.status(304).send();
      return;
    }
    void reply.type('application/schema+json; charset=utf-8').send(BODY);
  }
}
