import { applyDecorators } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiServiceUnavailableResponse,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorBody } from '@cars/contracts';

/** OpenAPI schema of SPEC.md's error body (the type itself is `ErrorBody` in contracts). */
export class ErrorResponseDto implements ErrorBody {
  @ApiProperty({ type: 'string', example: 'Validation Error' })
  error: string;

  @ApiProperty({ type: 'string', example: 'Invalid parameter: limit' })
  message: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    description: '400 only: parameter name → messages.',
    example: { limit: ['limit must be an integer from 1 to 100'] },
  })
  details?: Record<string, string[]>;
}

export const ApiValidationError = () =>
  ApiBadRequestResponse({
    type: ErrorResponseDto,
    description:
      '`Validation Error`: a bad or unknown parameter; `details` maps each parameter to its messages.',
  });

/** The error responses every counted query route can give. */
export const ApiQueryErrors = () =>
  applyDecorators(
    ApiValidationError(),
    ApiUnauthorizedResponse({ type: ErrorResponseDto, description: '`Unauthorized`: missing or invalid API key.' }),
    ApiTooManyRequestsResponse({
      type: ErrorResponseDto,
      description: '`Rate Limit Exceeded`: monthly allowance or burst limit exceeded (`Retry-After` on burst).',
    }),
    ApiServiceUnavailableResponse({ type: ErrorResponseDto, description: 'The query service did not answer in time.' }),
  );

export const ApiAuctionNotFound = () =>
  ApiNotFoundResponse({ type: ErrorResponseDto, description: 'No auction has this id (counts as a request).' });
