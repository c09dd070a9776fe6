import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/** Paths pino removes from every log line: credentials never reach the logs. */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  '*.authorization',
  '*.headers.authorization',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'secret',
  '*.secret',
];

export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { service },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** Start-up chatter of the framework (one line per module and route): debug, not info. */
const NOISY_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestMicroservice']);

/**
 * A log message from anything the framework passes: an Error's message, a string, or an event
 * object such as amqp-connection-manager's `{err}` on a disconnect (its error's message), else
 * the object as JSON — never "[object Object]".
 */
export function describeLogMessage(message: unknown): string {
  if (typeof message === 'string') return message;
  if (message instanceof Error) return message.message;
  if (message !== null && typeof message === 'object') {
    const inner = (message as { err?: unknown; error?: unknown }).err ?? (message as { error?: unknown }).error;
    if (inner !== undefined && inner !== message) return describeLogMessage(inner);
    try {
      return JSON.stringify(message);
    } catch {
      return Object.prototype.toString.call(message);
    }
  }
  return String(message);
}

/** Nest's logger interface over pino, so framework messages are structured JSON too. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    if (context && NOISY_CONTEXTS.has(context)) this.logger.debug({ context }, describeLogMessage(message));
    else this.logger.info({ context }, describeLogMessage(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, describeLogMessage(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, describeLogMessage(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, describeLogMessage(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, describeLogMessage(message));
  }
}
