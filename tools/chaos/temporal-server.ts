/**
 * The chaos run's Temporal server: a dev server keeping its state in a SQLite file, so it can be stopped and
 * started again on the same port and file mid-run, as a restart of a real server would be.
 */
import path from 'node:path';
import { startDevServer, type DevServer } from '../temporal-cli/dev-server.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../../src/contracts/search-attributes.js';

export interface RestartableServer {
  address: string;
  namespace: string;
  /** Stops the server and starts it again on the same port and file; resolves once it answers again. */
  restart(): Promise<{ downMs: number }>;
  stop(): Promise<void>;
}

export async function startRestartableServer(dir: string): Promise<RestartableServer> {
  const base = {
    headless: true,
    dbFilename: path.join(dir, 'chaos.db'),
    searchAttributes: toCliSearchAttributes(projectSearchAttributes),
  };
  let server: DevServer = await startDevServer(base);
  const port = Number(server.address.slice(server.address.lastIndexOf(':') + 1));
  return {
    address: server.address,
    namespace: server.namespace,
    async restart() {
      const down = Date.now();
      await server.stop();
      server = await startDevServer({ ...base, port });
      return { downMs: Date.now() - down };
    },
    stop: () => server.stop(),
  };
}
