import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { compiledValidatorFor, toValidationDetails, validationError } from '@cars/contracts';
import { ApiException } from './api-exception';

/**
 * Query strings and path parameters take a compiled path first (see libs/contracts' compiled-validation.ts): a
 * valid one is converted and checked by the DTO's own rules without class-validator's machinery;
 * anything it does not accept at once — every invalid request among them — is validated by
 * class-validator as before, which words every 400.
 */
class GatewayValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if ((metadata.type === 'query' || metadata.type === 'param') && typeof metadata.metatype === 'function') {
      const valid = compiledValidatorFor(metadata.metatype as new () => object, 'strings')?.(value);
      if (valid !== undefined) return valid;
    }
    return super.transform(value, metadata);
  }
}

/**
 * Query strings and bodies are validated with the shared DTO classes; unknown parameters are
 * errors (they are usually typos), and every bad parameter is named in `details`.
 */
export function createValidationPipe(): ValidationPipe {
  return new GatewayValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    validateCustomDecorators: false,
    exceptionFactory: (errors) => new ApiException(400, validationError(toValidationDetails(errors))),
  });
}
