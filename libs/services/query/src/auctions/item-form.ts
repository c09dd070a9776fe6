import { PAGE_ROWS_READER_REQUEST } from '@cars/contracts';
import type { RmqContext } from '@nestjs/microservices';
import type { ItemForm } from './auction.projection';

/**
 * The form of the page a request is answered with: PageRows when its client reads them (the
 * request's AMQP `type` says so: a gateway of this release), its JSON text otherwise — a gateway
 * of the previous release during a rolling deploy, or the in-process transport (no message).
 */
export function itemFormOf(context: RmqContext | undefined): ItemForm {
  const message = context?.getMessage() as { properties?: { type?: unknown } } | undefined;
  return message?.properties?.type === PAGE_ROWS_READER_REQUEST ? 'rows' : 'json';
}
