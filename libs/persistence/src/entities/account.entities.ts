import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type PlanId = 'free' | '1k' | '10k' | '100k';

@Entity('accounts')
export class AccountEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') email: string;
  @Column('boolean') emailVerified: boolean;
  @Column('text') plan: PlanId;
  @Column('timestamptz', { nullable: true }) planExpiresAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}

/** Only a SHA-256 hash of the key is stored; `prefix` finds it for operators. */
@Entity('api_keys')
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') accountId: string;
  @Column('text') prefix: string;
  @Column('text') keyHash: string;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @Column('timestamptz', { nullable: true }) revokedAt: Date | null;
  @Column('timestamptz', { nullable: true }) lastUsedAt: Date | null;
}

@Entity('usage_ledger')
export class UsageLedgerEntity {
  @PrimaryColumn('uuid') accountId: string;
  /** First day of the billing period (calendar month, UTC), YYYY-MM-DD. */
  @PrimaryColumn('date') period: string;
  @Column('integer') used: number;
  @Column('integer') reserved: number;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
