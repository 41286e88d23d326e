/** `npm run worker`: the worker alone, against an existing Temporal server. SIGTERM / SIGINT drain it gracefully. */
import { WorkerProcess } from '../worker/process.js';
import { loadWorkerSettings } from '../worker/settings.js';
import { runMain } from './run-main.js';

async function main(): Promise<number> {
  const worker = new WorkerProcess(loadWorkerSettings(process.env), { main: true });
  try {
    if (await worker.open()) await worker.run();
  } finally {
    await worker.close();
  }
  return 0;
}

runMain(main);
