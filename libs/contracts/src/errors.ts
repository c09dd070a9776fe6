/** The error body of every error response. `details` appears on 400 only: parameter name → messages. */
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

/**
 * Bounds of an error body. Parameter names and paths come from the client: an answer names them,
 * cut short, and lists a bounded number of problems, so it never grows with (or repeats) the input.
 */
export const ERROR_BODY_BOUNDS = { name: 64, message: 300, entries: 20, messagesPerEntry: 5, namesInMessage: 10 } as const;

/** `text` cut to `max` characters (an ellipsis marks the cut). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function validationError(details: Record<string, string[]>, message?: string): ErrorBody {
  const names = Object.keys(details);
  const shown = names.slice(0, ERROR_BODY_BOUNDS.namesInMessage).map((name) => clip(name, ERROR_BODY_BOUNDS.name));
  const more = names.length > shown.length ? ` and ${names.length - shown.length} more` : '';
  return {
    error: ErrorNames.Validation,
    message: message ?? `Invalid parameter${names.length === 1 ? '' : 's'}: ${shown.join(', ')}${more}`,
    details,
  };
}

/** The detail of a member a route does not know: the member named (cut short), as clients spell it. */
export function unrecognised(name: string, kind: 'parameter' | 'field'): string {
  return `${clip(name, ERROR_BODY_BOUNDS.name)} is not a recognised ${kind}`;
}

/**
 * The body as it leaves: the message and every detail within ERROR_BODY_BOUNDS (at most 20
 * entries, names of 64 characters, 5 messages of 300 characters each), whoever built it.
 */
export function boundedErrorBody(body: ErrorBody): ErrorBody {
  const bounded: ErrorBody = { error: body.error, message: clip(body.message, ERROR_BODY_BOUNDS.message) };
  if (body.details !== undefined) {
    bounded.details = Object.fromEntries(
      Object.entries(body.details)
        .slice(0, ERROR_BODY_BOUNDS.entries)
        .map(([name, messages]) => [
          clip(name, ERROR_BODY_BOUNDS.name),
          messages.slice(0, ERROR_BODY_BOUNDS.messagesPerEntry).map((m) => clip(String(m), ERROR_BODY_BOUNDS.message)),
        ]),
    );
  }
  return bounded;
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
