import { ApiProperty } from '@nestjs/swagger';
import { IsString, MinLength } from 'class-validator';

export class ListModelsQueryDto {
  @ApiProperty({ description: 'Exact make name from /makes.', minLength: 1, example: 'Porsche' })
  @IsString()
  @MinLength(1)
  make: string;
}

export interface NameListResponse {
  data: string[];
}
