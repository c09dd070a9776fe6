import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { ServiceUnavailableError } from '@cars/messaging';
import { boundedErrorBody, clip, ErrorBody, ErrorNames, errorMessage } from '@cars/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiException } from './api-exception';

const NAMES: Record<number, string> = {
  400: ErrorNames.Validation,
  401: ErrorNames.Unauthorized,
  403: ErrorNames.Forbidden,
  404: ErrorNames.NotFound,
  405: 'Method Not Allowed',
  409: ErrorNames.Conflict,
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: ErrorNames.RateLimit,
  503: ErrorNames.ServiceUnavailable,
};

/** Why a service was unavailable (a timeout, a refused connection…), for the operator's log line. */
function causeOf(exception: unknown): string {
  const cause = (exception as { cause?: unknown })?.cause;
  if (cause === undefined) return '';
  // An error answered by the service arrives as a plain object with a message.
  const message = typeof cause === 'object' && cause !== null && !(cause instanceof Error) && 'message' in cause ? String(cause.message) : errorMessage(cause);
  return ` (${message})`;
}

const UNSUPPORTED_MEDIA_TYPE = 'Request bodies are JSON: send content-type: application/json';

/**
 * Fastify's errors of a request (its codes with a 4xx status), each with a fixed message: the
 * framework's own messages quote the input (the path, the content type, a piece of the body).
 * Errors about the body carry `details.body`, about the URL `details.path`.
 */
const FRAMEWORK_ERRORS: Record<string, { status: number; message: string; about?: 'body' | 'path' }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'The request body is larger than 64 KB' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: UNSUPPORTED_MEDIA_TYPE },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'The body is not as long as its Content-Length header says', about: 'body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'The body is empty but its content-type is application/json', about: 'body' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'The body is not valid JSON', about: 'body' },
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: { status: 400, message: 'This route takes a JSON body: send content-type: application/json', about: 'body' },
  FST_ERR_ROUTE_MISSING_CONTENT: { status: 400, message: 'This route takes a JSON body', about: 'body' },
  FST_ERR_VALIDATION: { status: 400, message: 'The request is malformed' },
  FST_ERR_BAD_URL: { status: 400, message: 'The path is not a valid URL (a bad percent-encoding)', about: 'path' },
  FST_ERR_INVALID_URL: { status: 400, message: 'The URL is not valid', about: 'path' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, message: 'A path parameter is longer than 100 characters' },
  FST_ERR_NOT_FOUND: { status: 404, message: 'No such route' },
};

/** Nest hands Fastify's errors over as HttpExceptions of their status (without their code). */
const FIXED_MESSAGES: Record<number, string> = {
  413: FRAMEWORK_ERRORS.FST_ERR_CTP_BODY_TOO_LARGE.message,
  414: FRAMEWORK_ERRORS.FST_ERR_MAX_PARAM_LENGTH.message,
  415: UNSUPPORTED_MEDIA_TYPE,
};

const NAMES_BEYOND: Record<number, string> = { 408: 'Request Timeout', 414: 'URI Too Long', 431: 'Request Header Fields Too Large' };

/** The envelope's `error` for a status. */
export function errorNameOf(status: number): string {
  return NAMES[status] ?? NAMES_BEYOND[status] ?? (status >= 500 ? ErrorNames.Internal : 'Error');
}

/**
 * The answer to an error Fastify raised (a known code, a JSON syntax error of the body parser, any
 * other error with a 4xx statusCode), in the envelope and without echoing the input; undefined
 * for anything else.
 */
export function frameworkErrorResponse(exception: unknown): { status: number; body: ErrorBody } | undefined {
  const { code, statusCode } = (exception ?? {}) as { code?: unknown; statusCode?: unknown };
  const known = typeof code === 'string' ? FRAMEWORK_ERRORS[code] : undefined;
  if (known) {
    const body: ErrorBody = { error: errorNameOf(known.status), message: known.message };
    if (known.about) body.details = { [known.about]: [known.message] };
    return { status: known.status, body };
  }
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode >= 500) return undefined;
  // The JSON parser's SyntaxError (its message quotes the body), prototype poisoning included.
  const message =
    exception instanceof SyntaxError ? 'The body is not valid JSON' : statusCode === 415 ? UNSUPPORTED_MEDIA_TYPE : 'The request is malformed';
  const body: ErrorBody = { error: errorNameOf(statusCode), message };
  if (statusCode === 400) body.details = { body: [message] };
  return { status: statusCode, body };
}

/** Every error leaves the gateway as `{error, message, details?}`; 5xx never leak internals. */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const { status, body, headers } = this.toResponse(exception, request);
    if (status >= 500 && status !== 503) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    } else if (status === 503) {
      this.logger.warn(`${request.method} ${request.url.split('?')[0]} → 503: ${String(exception)}${causeOf(exception)}`);
    }
    void reply.status(status).headers(headers).type('application/json; charset=utf-8').send(boundedErrorBody(body));
  }

  private toResponse(
    exception: unknown,
    request: FastifyRequest,
  ): { status: number; body: ErrorBody; headers: Record<string, string> } {
    if (exception instanceof ApiException) {
      return { status: exception.getStatus(), body: exception.body, headers: exception.headers };
    }
    if (exception instanceof ServiceUnavailableError) {
      return {
        status: HttpStatus.SERVICE_UNAVAILABLE,
        body: { error: ErrorNames.ServiceUnavailable, message: `${exception.message}; try again shortly` },
        headers: { 'retry-after': '1' },
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const error = errorNameOf(status);
      const message =
        status === 404
          ? noRoute(request.method, request.url)
          : status === 400
            ? 'The request is malformed'
            : (FIXED_MESSAGES[status] ?? exception.message);
      const body: ErrorBody = { error, message };
      if (status === 400) body.details = { body: [exception.message] };
      return { status, body, headers: {} };
    }
    // Fastify's own errors (bad JSON body, body too large…) carry a statusCode.
    const framework = frameworkErrorResponse(exception);
    if (framework) return { ...framework, headers: {} };
    return {
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      body: { error: ErrorNames.Internal, message: 'An unexpected error occurred' },
      headers: {},
    };
  }
}

/** The 404 of an unknown route names it, cut short (the path is the client's). */
export function noRoute(method: string, url: string): string {
  return `No route ${clip(method, 16)} ${clip(url.split('?')[0], 100)}`;
}
