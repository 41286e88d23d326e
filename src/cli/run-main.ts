import { ConfigError } from '../config/env.js';

/** A configuration error exits 2 naming the variable (never its value); anything else exits 1 with its message. */
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
