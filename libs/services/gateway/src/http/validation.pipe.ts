import { ValidationPipe } from '@nestjs/common';
import { toValidationDetails, validationError } from '@cars/contracts';
import { ApiException } from './api-exception';

/**
 * Query strings and bodies are validated with the shared DTO classes; unknown parameters are
 * errors (they are usually typos), and every bad parameter is named in `details`.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    validateCustomDecorators: false,
    exceptionFactory: (errors) => new ApiException(400, validationError(toValidationDetails(errors))),
  });
}
