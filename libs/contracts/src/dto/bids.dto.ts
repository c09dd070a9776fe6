import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, ValidateBy, ValidationArguments } from 'class-validator';
import { MAX_AUCTION_ID } from './auctions.dto';
import { DateTimeParam, EnumParam, IntegerParam, NotGreaterThan } from './auctions.validators';
import {
  CursorParam,
  MAX_LIMIT,
  PageParam,
  PaginationMetaDto,
  PaginationMode,
  PaginationModeParam,
  SORT_DIRECTIONS,
  SortDirection,
} from './pagination.dto';

export const BID_SORTS = ['bid_at', 'amount', 'created'] as const;
export type BidSort = (typeof BID_SORTS)[number];
export const BIDS_DEFAULT_LIMIT = 100;

/** A decimal integer from 1 to the bigint maximum, as a string (auction ids are bigint). */
export function isAuctionId(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    /^[1-9]\d{0,18}$/.test(value) &&
    (value.length < MAX_AUCTION_ID.length || value <= MAX_AUCTION_ID)
  );
}

/** Path parameters of GET /auctions/{auction_id}/bids. */
export class AuctionIdParamDto {
  @ApiProperty({
    name: 'auction_id',
    type: 'integer',
    minimum: 1,
    description: 'The `id` of an auction from /auctions or /auctions/live.',
    example: 48213,
  })
  @IsString()
  @ValidateBy({
    name: 'auctionId',
    validator: {
      validate: isAuctionId,
      defaultMessage: (args?: ValidationArguments) =>
        `${args?.property ?? 'auction_id'} must be an integer from 1 to ${MAX_AUCTION_ID}`,
    },
  })
  auction_id: string;
}

/** Query parameters of GET /auctions/{auction_id}/bids. */
export class ListBidsQueryDto {
  @ApiPropertyOptional({ type: 'string', format: 'date-time', description: 'Bids placed at or after this instant.', example: '2026-01-30T00:00:00Z' })
  @DateTimeParam()
  @NotGreaterThan('bid_before')
  bid_after?: string;

  @ApiPropertyOptional({ type: 'string', format: 'date-time', description: 'Bids placed at or before this instant.', example: '2026-01-31T23:59:59Z' })
  @DateTimeParam()
  bid_before?: string;

  @ApiPropertyOptional({
    enum: BID_SORTS,
    default: 'bid_at',
    description: '`created` = when the service first stored the bid; ties broken by `id`; null values sort last.',
  })
  @EnumParam(BID_SORTS)
  sort?: BidSort;

  @ApiPropertyOptional({ enum: SORT_DIRECTIONS, default: 'asc' })
  @EnumParam(SORT_DIRECTIONS)
  direction?: SortDirection;

  @PageParam()
  page?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: BIDS_DEFAULT_LIMIT })
  @IntegerParam(1, MAX_LIMIT)
  limit?: number;

  @PaginationModeParam()
  pagination?: PaginationMode;

  @CursorParam()
  cursor?: string;
}

/** The query service's request for one auction's bids: the path id plus the query. */
export class ListBidsRequestDto extends ListBidsQueryDto {
  @IsString({ message: 'auction_id must be a string of digits' })
  @ValidateBy({
    name: 'auctionId',
    validator: {
      validate: isAuctionId,
      defaultMessage: () => `auction_id must be an integer from 1 to ${MAX_AUCTION_ID}`,
    },
  })
  auction_id: string;
}

/** An item of GET /auctions/{auction_id}/bids. */
export class BidDto {
  @ApiProperty({ type: 'integer', nullable: true, example: 9912 })
  id: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 48213 })
  auction_id: number | null;

  @ApiProperty({ type: 'string', nullable: true, example: 'aircooled77' })
  bidder_name: string | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 145000 })
  amount: number | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'ISO 4217 code.', example: 'USD' })
  currency: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-01-31T17:59:40.000Z' })
  bid_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-01-31T18:00:03.000Z' })
  created_at: string | null;
}

export class BidListResponseDto {
  @ApiProperty({ type: () => BidDto, isArray: true })
  data: BidDto[];

  @ApiProperty({ type: () => PaginationMetaDto })
  meta: PaginationMetaDto;
}
