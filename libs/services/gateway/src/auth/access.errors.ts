import { ErrorNames } from '@cars/contracts';
import { ApiException } from '../http/api-exception';

/** The 401 answers of authentication, with the error values of docs/api/accounts.md (admission's 403/429: metering/admission.errors.ts). */

const HOW_TO_AUTHENTICATE = 'send it in the Authorization header as "Authorization: Bearer <API_KEY>"';

export function missingApiKey(): ApiException {
  return new ApiException(
    401,
    { error: ErrorNames.Unauthorized, message: `An API key is required: ${HOW_TO_AUTHENTICATE}` },
    { 'www-authenticate': 'Bearer' },
  );
}

export function invalidApiKey(): ApiException {
  return new ApiException(
    401,
    {
      error: ErrorNames.Unauthorized,
      message: `The API key is invalid or revoked; a valid API key is required: ${HOW_TO_AUTHENTICATE}`,
    },
    { 'www-authenticate': 'Bearer error="invalid_token"' },
  );
}

export function ambiguousApiKey(): ApiException {
  return new ApiException(
    401,
    {
      error: ErrorNames.Unauthorized,
      message: `More than one Authorization header was sent; ${HOW_TO_AUTHENTICATE}, exactly once`,
    },
    { 'www-authenticate': 'Bearer error="invalid_request"' },
  );
}

/** Node keeps only the first of repeated Authorization headers: count them in the raw list. */
export function authorizationHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === 'authorization') count += 1;
  return count;
}
