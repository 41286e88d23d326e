/** `npm run worker`: the worker alone, against an existing Temporal server. SIGTERM / SIGINT drain it gracefully. */
import { WorkerLifecycle } from '../worker/lifecycle.js';
import { loadWorkerSettings } from '../worker/settings.js';
import { stopOnSignals } from '../worker/shutdown.js';
import { runMain } from './run-main.js';

async function main(): Promise<number> {
  const worker = new WorkerLifecycle(loadWorkerSettings(process.env));
  // From before the start-up, so that a signal during it stops it too, within the same bound.
  stopOnSignals(worker);
  try {
    if (await worker.open()) await worker.run();
  } finally {
    await worker.close();
  }
  return 0;
}

runMain(main);
