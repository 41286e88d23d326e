import { ConfigError } from '../config/env.js';

/**
 * Runs a command-line entry point: its number is the exit code; a configuration error exits 2 with the
 * variable named (never its value); anything else (Temporal unreachable or refusing, search attributes missing,
 * a service refusing its credentials) exits 1 with the message, which names what failed and never a secret.
 */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      if (err instanceof ConfigError) {
        console.error(`configuration error: ${err.message}`);
        process.exit(2);
      }
      console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
