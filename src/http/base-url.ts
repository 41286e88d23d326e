import { BlockList, isIP } from 'node:net';
import { ConfigError } from '../config/env.js';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Lower case, without IPv6 brackets or a trailing root dot (`localhost.` is still localhost). */
export function normaliseHost(hostname: string): string {
  return hostname
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/** 127.0.0.0/8, ::1 (in any spelling), `localhost` and its subdomains. */
export function isLoopbackHost(hostname: string): boolean {
  const host = normaliseHost(hostname);
  const version = isIP(host);
  if (version !== 0) return LOOPBACK.check(host, version === 4 ? 'ipv4' : 'ipv6');
  return host === 'localhost' || host.endsWith('.localhost');
}

/**
 * Refused unless the key travels encrypted: `https`, or `http` to loopback or to a host named in ALLOW_INSECURE_HTTP
 * (`insecureHosts`, a private network like a compose stack's). The message names the host, never the whole URL.
 */
export function assertSecureBaseUrl(service: string, baseUrl: string, insecureHosts: readonly string[] = []): void {
  const url = URL.parse(baseUrl);
  if (!url) throw new ConfigError(`the ${service} base URL must be an absolute http(s) URL`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`the ${service} base URL must be http(s), got ${url.protocol.replace(/:$/, '')}`);
  const host = normaliseHost(url.hostname);
  if (url.protocol === 'https:' || isLoopbackHost(host) || insecureHosts.map(normaliseHost).includes(host)) return;
  throw new ConfigError(
    `the ${service} base URL is plain http to ${url.host}, which is not loopback: its key would travel in clear. ` +
      `Use https, or add ${host} to ALLOW_INSECURE_HTTP (comma-separated hosts) if the network in between is private`,
  );
}
