import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ApiNoCredentials, Public } from '../auth/auth.decorators';
import { ApiValidationError } from '../auctions/api-responses';
import { API_TITLE, API_VERSION } from '../openapi';

class IndexLinksDto {
  @ApiProperty({ example: '/docs', description: 'Interactive API reference.' })
  docs: string;

  @ApiProperty({ example: '/openapi.json', description: 'The OpenAPI 3 document.' })
  openapi: string;

  @ApiProperty({ example: '/health/ready' })
  health: string;
}

class IndexDto {
  @ApiProperty({ example: API_TITLE })
  name: string;

  @ApiProperty({ example: API_VERSION })
  version: string;

  @ApiProperty({ type: IndexLinksDto })
  links: IndexLinksDto;
}

/** `GET /`: what this is and where to read on, instead of a bare 404. */
@ApiTags('Health')
@Public()
@ApiNoCredentials()
@Controller()
export class RootController {
  @Get()
  @ApiOperation({ summary: 'Service index: name, version and where the documentation is' })
  @ApiOkResponse({ type: IndexDto })
  @ApiValidationError()
  index(): IndexDto {
    return {
      name: API_TITLE,
      version: API_VERSION,
      links: { docs: '/docs', openapi: '/openapi.json', health: '/health/ready' },
    };
  }
}
