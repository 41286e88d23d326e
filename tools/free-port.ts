import { readFileSync } from 'node:fs';
import net from 'node:net';

const LOWEST = 10_000;
const ATTEMPTS = 100;
/** Ports this process has handed out: two picks made before either server binds cannot get the same one. */
const handedOut = new Set<number>();

/**
 * A port free on `host` a moment ago, for a server another process binds later (a worker's metrics, a callback
 * receiver, a dev server). Drawn from below the kernel's ephemeral range: a port from `listen(0)` lies inside it, where
 * any outgoing connection on the machine may take it before the other process binds, which then fails with
 * EADDRINUSE.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const highest = ephemeralRangeStart() - 1;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (highest - LOWEST + 1));
    if (handedOut.has(port) || !(await canListen(host, port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port on ${host} between ${LOWEST} and ${highest} after ${ATTEMPTS} tries`);
}

/** Whether `port` can be bound on `host` now; a port some other server holds is not free even if it is requested. */
export function canListen(host: string, port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(start) && start > LOWEST + 1_000) return start;
  } catch {
    // Not Linux: the IANA range, which macOS and Windows use.
  }
  return 49_152;
}
