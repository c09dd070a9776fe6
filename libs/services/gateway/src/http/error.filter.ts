import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { ServiceUnavailableError } from '@cars/messaging';
import { ErrorBody, ErrorNames, errorMessage } from '@cars/contracts';
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
    void reply.status(status).headers(headers).type('application/json; charset=utf-8').send(body);
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
      const error = NAMES[status] ?? (status >= 500 ? ErrorNames.Internal : 'Error');
      const message =
        status === 404
          ? `No route ${request.method} ${request.url.split('?')[0]}`
          : status === 400
            ? 'The request is malformed'
            : status === 415
              ? UNSUPPORTED_MEDIA_TYPE
              : exception.message;
      const body: ErrorBody = { error, message };
      if (status === 400) body.details = { body: [exception.message] };
      return { status, body, headers: {} };
    }
    // Fastify's own errors (bad JSON body, body too large…) carry a statusCode.
    const statusCode = (exception as { statusCode?: unknown })?.statusCode;
    if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
      const message = statusCode === 415 ? UNSUPPORTED_MEDIA_TYPE : ((exception as Error).message ?? 'Bad request');
      const body: ErrorBody = { error: NAMES[statusCode] ?? 'Error', message };
      if (statusCode === 400) body.details = { body: [message] };
      return { status: statusCode, body, headers: {} };
    }
    return {
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      body: { error: ErrorNames.Internal, message: 'An unexpected error occurred' },
      headers: {},
    };
  }
}
