// Usage: npm run temporal:install [-- --test-server]
// Puts the pinned Temporal CLI (and optionally the time-skipping test server) where the resolver finds it.
import { resolveTemporalExecutable } from './resolver.js';
import type { TemporalTool } from './resolver.js';

async function main(): Promise<void> {
  const tools: TemporalTool[] = ['temporal'];
  if (process.argv.includes('--test-server')) tools.push('temporal-test-server');

  for (const tool of tools) {
    const started = Date.now();
    const resolved = await resolveTemporalExecutable(tool, {
      install: true,
      logger: (msg) => console.log(`[${tool}] ${msg}`),
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`${tool}: ${resolved.path} (source: ${resolved.source}, ${seconds}s)`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
