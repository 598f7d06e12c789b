import { type Logger, pino } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger } from 'pino';

/** Secrets never reach the log, even if a caller passes a whole header or body object by mistake. */
const REDACT = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'key',
  'rawKey',
  '*.rawKey',
  'password',
  '*.password',
  'value',
  '*.value',
];

/**
 * JSON lines, one object each, with an ISO 8601 `time` (UTC) a person can read and a machine can parse. For people
 * at a terminal: `npm start | npx pino-pretty` (docs/platform.md).
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'monitoring-api' }, timestamp: pino.stdTimeFunctions.isoTime },
    destination,
  );
}
