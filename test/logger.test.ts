import { Writable } from 'node:stream';
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/env.js';
import { REDACTED_PATHS, prettyLogs } from '../src/logger.js';

describe('log format', () => {
  it('is readable on a terminal and JSON elsewhere, unless LOG_FORMAT says otherwise', () => {
    expect(prettyLogs({}, true)).toBe(true);
    expect(prettyLogs({}, false)).toBe(false);
    expect(prettyLogs({ LOG_FORMAT: 'json' }, true)).toBe(false);
    expect(prettyLogs({ LOG_FORMAT: ' Pretty ' }, false)).toBe(true);
    expect(() => prettyLogs({ LOG_FORMAT: 'xml' }, true)).toThrow(ConfigError);
    expect(() => prettyLogs({ LOG_FORMAT: 'xml' }, true)).toThrow(/LOG_FORMAT: must be pretty or json/);
  });

  it('hides the same secrets in a readable line as in a JSON one', () => {
    let text = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    });
    const logger = pino(
      { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
      pretty({ destination: sink, sync: true, colorize: false }),
    );
    logger.info(
      { config: { compliance: { apiKey: 'cmp_sk_live_secret_0001' } }, callbackUrl: 'https://x/callbacks/token' },
      'configured',
    );
    expect(text).toContain('configured');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain('cmp_sk_live_secret_0001');
    expect(text).not.toContain('callbacks/token');
  });
});
