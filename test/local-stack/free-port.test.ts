import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { canListen, freePort } from '../../tools/free-port.js';

describe('freePort', () => {
  it('hands out distinct ports below the ephemeral range, which outgoing connections never take', async () => {
    const ephemeralStart = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralStart);
    }
  });

  it('tells a port another server holds from a free one', async () => {
    const server = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      expect(await canListen('127.0.0.1', port)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await canListen('127.0.0.1', port)).toBe(true);
  });
});
