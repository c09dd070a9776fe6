import { ApiProperty } from '@nestjs/swagger';
import { RequiredNameParam } from './auctions.validators';

export class ListModelsQueryDto {
  @ApiProperty({ description: 'Exact make name from /makes. Required.', minLength: 1, maxLength: 100, example: 'Porsche' })
  @RequiredNameParam(100, 'an exact make name from GET /makes')
  make: string;
}

export interface NameListResponse {
  data: string[];
}
