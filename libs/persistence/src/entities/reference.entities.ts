import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

@Entity('sources')
export class SourceEntity {
  @PrimaryColumn('text') id: string;
  @Column('text') name: string;
  @Column('boolean') live: boolean;
  @Column('text') timezone: string;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}

@Entity('makes')
export class MakeEntity {
  @PrimaryGeneratedColumn() id: number;
  @Column('text') name: string;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}

@Entity('make_aliases')
export class MakeAliasEntity {
  @PrimaryColumn('text') alias: string;
  @Column('integer', { nullable: true }) makeId: number | null;
  @Column('boolean') excluded: boolean;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}

@Entity('models')
export class ModelEntity {
  @PrimaryGeneratedColumn() id: number;
  @Column('integer') makeId: number;
  @Column('text') name: string;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}

@Entity('model_aliases')
export class ModelAliasEntity {
  @PrimaryColumn('integer') makeId: number;
  @PrimaryColumn('text') alias: string;
  @Column('integer') modelId: number;
}
