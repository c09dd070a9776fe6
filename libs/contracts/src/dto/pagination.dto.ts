import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { Absent, EnumParam, IntegerParam, NotWith } from './auctions.validators';

/** Paging limits: page ≥ 1; limit 1–100. */
export const MAX_PAGE = 2_147_483_647;
export const MAX_LIMIT = 100;
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;
export type SortDirection = (typeof SORT_DIRECTIONS)[number];

/**
 * Paging modes (docs/api/query.md): `page` (default; `page` and `limit`) or `cursor` (keyset paging
 * for deep reads: follow `meta.next_cursor`).
 */
export const PAGINATION_MODES = ['page', 'cursor'] as const;
export type PaginationMode = (typeof PAGINATION_MODES)[number];

/** A cursor as the service issues it: `<base64url payload>.<base64url MAC>`. */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]{8,600}\.[A-Za-z0-9_-]{16,64}$/;

export class PaginationMetaDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Exact number of items matching the filters.', example: 1234 })
  total: number;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'Page number. In cursor mode, the position of this page counted in pages of `limit`.',
    example: 1,
  })
  page: number;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, example: 50 })
  limit: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'ceil(total / limit).', example: 25 })
  total_pages: number;

  @ApiProperty({ type: 'boolean', description: 'Whether another page follows (both modes).', example: true })
  has_more: boolean;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      'Pass as `cursor` (with the same filters, sort and direction) for the next page; null on the last page. Present in both modes: a client may start in page mode and follow it.',
    example: 'eyJ2IjoxLCJrIjoiMjAyNi0wMS0zMSIsImkiOiI0MiIsIm8iOjUwfQ.q1w2e3r4t5y6u7i8o9p0aa',
  })
  next_cursor: string | null;
}

/** The paginated envelope of list responses: `{data: [items], meta: {total, page, limit, total_pages}}`. */
export interface Paginated<T> {
  data: T[];
  meta: PaginationMetaDto;
}

/**
 * The JSON text of a `T`, as the query service serializes it (straight from PostgreSQL) for the
 * gateway to send unchanged: large pages are not parsed and re-serialized on every hop. The type
 * parameter keeps the contract checked on both ends.
 */
export type JsonText<T> = string & { readonly __jsonOf?: T };

/**
 * The paging parameters of every list route (`/auctions`, `/auctions/live`, bids): `page` (page
 * mode), `pagination` and `cursor` (a cursor alone means cursor mode; with `page` or
 * `pagination=page` it is a contradiction).
 */
export function PageParam(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Page number (page mode).' }),
    IntegerParam(1, MAX_PAGE),
    NotWith('pagination', 'cursor', 'page cannot be combined with pagination=cursor; follow meta.next_cursor instead'),
    Absent('cursor', 'page cannot be combined with cursor: a cursor already says where the page starts'),
  );
}

export function PaginationModeParam(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      enum: PAGINATION_MODES,
      default: 'page',
      description:
        '`cursor`: keyset paging for deep reads. Every page, in either mode, carries `meta.has_more` and ' +
        '`meta.next_cursor`; a request with `cursor` is in cursor mode without this parameter.',
    }),
    EnumParam(PAGINATION_MODES),
  );
}

export function CursorParam(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      description:
        'Opaque cursor from `meta.next_cursor` of any page (same filters, sort and direction): the next page. Implies cursor mode.',
      maxLength: 700,
    }),
    IsOptional(),
    IsString({ message: 'cursor must be a single string value' }),
    Matches(CURSOR_PATTERN, { message: 'cursor is not a cursor issued by this API' }),
    NotWith('pagination', 'page', 'cursor cannot be combined with pagination=page'),
  );
}
