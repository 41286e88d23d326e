// Usage: npm run temporal:install [-- --test-server]
// Puts the pinned Temporal CLI (and optionally the time-skipping test server) where the resolver finds it.
import { createProgram, parseAndRun } from '../../src/cli/command.js';
import { resolveTemporalExecutable } from './resolver.js';
import type { TemporalTool } from './resolver.js';

async function main({ testServer }: { testServer?: boolean }): Promise<number> {
  const tools: TemporalTool[] = ['temporal'];
  if (testServer) tools.push('temporal-test-server');

  for (const tool of tools) {
    const started = Date.now();
    const resolved = await resolveTemporalExecutable(tool, {
      install: true,
      logger: (msg) => console.log(`[${tool}] ${msg}`),
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`${tool}: ${resolved.path} (source: ${resolved.source}, ${seconds}s)`);
  }
  return 0;
}

const program = createProgram(
  'npm run temporal:install --',
  'Finds or installs the pinned Temporal CLI where the resolver finds it, and prints its path.',
)
  .option('--test-server', 'the time-skipping test server too')
  .act((_args, options) => main(options));

parseAndRun(program).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
