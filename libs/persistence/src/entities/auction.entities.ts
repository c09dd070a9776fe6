import { Column, Entity, Generated, PrimaryColumn } from 'typeorm';

/** bigint columns arrive from pg as strings; this keeps them numbers (all fit in 2^53). */
export const bigintNumber = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value == null ? null : Number(value)),
};

@Entity('auctions')
export class AuctionEntity {
  @Generated('increment') @PrimaryColumn('bigint', { transformer: bigintNumber }) id: number;
  @Column('text') source: string;
  @Column('text') sourceAuctionId: string;
  @Column('text', { nullable: true }) url: string | null;
  @Column('text', { nullable: true }) title: string | null;
  @Column('text') sourceStatus: string;
  @Column('text', { nullable: true }) auctionStatus: string | null;
  @Column('boolean') isLive: boolean;
  @Column('bigint', { nullable: true, transformer: bigintNumber }) price: number | null;
  @Column('char', { length: 3, nullable: true }) currency: string | null;
  @Column('bigint', { nullable: true, transformer: bigintNumber }) priceUsd: number | null;
  @Column('date', { nullable: true }) auctionEndDate: string | null;
  @Column('timestamptz', { nullable: true }) auctionEndAt: Date | null;
  @Column('timestamp', { nullable: true }) auctionEndLocal: Date | null;
  @Column('integer', { nullable: true }) mileage: number | null;
  @Column('text', { nullable: true }) mileageUnit: string | null;
  @Column('text', { nullable: true }) vin: string | null;
  @Column('text', { nullable: true }) titleStatus: string | null;
  @Column('text', { nullable: true }) city: string | null;
  @Column('text', { nullable: true }) state: string | null;
  @Column('text', { nullable: true }) zip: string | null;
  @Column('text', { nullable: true }) countryCode: string | null;
  @Column('text', { nullable: true }) sellerUsername: string | null;
  @Column('text', { nullable: true }) sellerType: string | null;
  @Column('smallint', { nullable: true }) year: number | null;
  @Column('boolean', { nullable: true }) hasReserve: boolean | null;
  @Column('text', { nullable: true }) listingMake: string | null;
  @Column('text', { nullable: true }) listingModel: string | null;
  @Column('text', { nullable: true }) ocdMakeName: string | null;
  @Column('text', { nullable: true }) ocdModelName: string | null;
  @Column('text', { nullable: true }) engine: string | null;
  @Column('text', { nullable: true }) drivetrain: string | null;
  @Column('text', { nullable: true }) transmission: string | null;
  @Column('text', { nullable: true }) bodyStyle: string | null;
  @Column('text', { nullable: true }) exteriorColor: string | null;
  @Column('text', { nullable: true }) standardExteriorColor: string | null;
  @Column('text', { nullable: true }) interiorColor: string | null;
  @Column('text', { nullable: true }) standardInteriorColor: string | null;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { nullable: true }) ownershipHistory: string | null;
  @Column('text', { array: true }) modifications: string[];
  @Column('text', { array: true }) knownFlaws: string[];
  @Column('text', { array: true }) recentServiceHistory: string[];
  @Column('text', { array: true }) listingDetails: string[];
  @Column('text', { nullable: true }) featuredImageUrl: string | null;
  @Column('integer', { nullable: true }) views: number | null;
  @Column('integer', { nullable: true }) watches: number | null;
  @Column('integer', { nullable: true }) likes: number | null;
  @Column('integer', { nullable: true }) comments: number | null;
  @Column('integer', { nullable: true }) bidCount: number | null;
  @Column('integer', { nullable: true }) uniqueBidderCount: number | null;
  @Column('text', { nullable: true }) saleType: string | null;
  @Column('text', { nullable: true }) priceType: string | null;
  @Column('timestamptz') createdAt: Date;
  @Column('timestamptz') updatedAt: Date;
  @Column('timestamptz') observedAt: Date;
}

@Entity('bids')
export class BidEntity {
  @Generated('increment') @PrimaryColumn('bigint', { transformer: bigintNumber }) id: number;
  @Column('bigint', { transformer: bigintNumber }) auctionId: number;
  @Column('text') source: string;
  @Column('text') sourceBidId: string;
  @Column('text', { nullable: true }) bidderName: string | null;
  @Column('bigint', { nullable: true, transformer: bigintNumber }) amount: number | null;
  @Column('char', { length: 3, nullable: true }) currency: string | null;
  @Column('timestamptz', { nullable: true }) bidAt: Date | null;
  @Column('timestamp', { nullable: true }) bidAtLocal: Date | null;
  @Column('timestamptz') createdAt: Date;
  @Column('timestamptz') updatedAt: Date;
}

@Entity('bid_identities')
export class BidIdentityEntity {
  @PrimaryColumn('text') source: string;
  @PrimaryColumn('text') sourceBidId: string;
  @Column('bigint', { transformer: bigintNumber }) bidId: number;
  @Column('bigint', { transformer: bigintNumber }) auctionId: number;
  @Column('timestamptz') firstSeenAt: Date;
}

@Entity('events')
export class EventEntity {
  @Generated('increment') @PrimaryColumn('bigint', { transformer: bigintNumber }) seq: number;
  @Column('text') id: string;
  @Column('text') type: string;
  @Column('text') apiVersion: string;
  @Column('timestamptz') createdAt: Date;
  @Column('jsonb') payload: unknown;
  @Column('bigint', { nullable: true, transformer: bigintNumber }) auctionId: number | null;
  @Column('text', { nullable: true }) make: string | null;
  @Column('text', { nullable: true }) source: string | null;
  @Column('timestamptz', { nullable: true }) publishedAt: Date | null;
}
