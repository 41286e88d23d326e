import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { REDACTED_PATHS } from '../../src/logger.js';

/** A pino logger (as the app configures it) writing into memory, so tests can read every line it wrote. */
export function memoryLogger(): { logger: Logger; text: () => string; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level: 'trace', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, stream);
  const text = (): string => chunks.join('');
  return {
    logger,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
