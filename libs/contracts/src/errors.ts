/** The SPEC.md error body. `details` appears on 400 only: parameter name → messages. */
export interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, string[]>;
}

export const ErrorNames = {
  Validation: 'Validation Error',
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'Not Found',
  Conflict: 'Conflict',
  RateLimit: 'Rate Limit Exceeded',
  ServiceUnavailable: 'Service Unavailable',
  Internal: 'Internal Server Error',
} as const;

export function validationError(details: Record<string, string[]>, message?: string): ErrorBody {
  const names = Object.keys(details);
  return {
    error: ErrorNames.Validation,
    message: message ?? `Invalid parameter${names.length === 1 ? '' : 's'}: ${names.join(', ')}`,
    details,
  };
}

export function notFound(message: string): ErrorBody {
  return { error: ErrorNames.NotFound, message };
}

export function conflict(message: string): ErrorBody {
  return { error: ErrorNames.Conflict, message };
}

export function forbidden(message: string): ErrorBody {
  return { error: ErrorNames.Forbidden, message };
}

/** The message of anything thrown: an Error's message, else its string form. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
