import { ConfigError } from '../config/env.js';

/**
 * Runs a command-line entry point: its number is the exit code; a configuration error exits 2 with the
 * variable named (never its value); anything else exits 1 with the message.
 */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      if (err instanceof ConfigError) {
        console.error(`configuration error: ${err.message}`);
        process.exit(2);
      }
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
