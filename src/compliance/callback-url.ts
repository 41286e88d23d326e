/** The callback URL rule (C48), not shared with the sandbox's: two readings disagree in tests, not err together. */
import { BlockList, isIP } from 'node:net';
import { isLoopbackHost, normaliseHost } from '../http/base-url.js';

export const CALLBACK_URL_MAX_LENGTH = 2048;

/** RFC 6890 special-purpose ranges. */
const NON_PUBLIC = new BlockList();
const NON_PUBLIC_RANGES =
  '0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24 192.0.2.0/24 ' +
  '192.168.0.0/16 198.18.0.0/15 198.51.100.0/24 203.0.113.0/24 224.0.0.0/4 240.0.0.0/4 ' +
  '::/128 ::1/128 fc00::/7 fe80::/10 ff00::/8 2001:db8::/32 100::/64';
for (const range of NON_PUBLIC_RANGES.split(' ')) {
  const [network = '', prefix] = range.split('/');
  NON_PUBLIC.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
}

const PRIVATE_NAME_SUFFIXES =
  'localhost local localdomain internal intranet lan home.arpa corp private test invalid'.split(' ');

function isPublicHost(host: string): boolean {
  const version = isIP(host);
  if (version !== 0) return !NON_PUBLIC.check(host, version === 4 ? 'ipv4' : 'ipv6');
  // A single-label name (no dot) is resolved by local search domains, never on the public internet.
  if (!host.includes('.')) return false;
  return !PRIVATE_NAME_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));
}

/** `allowLoopback` accepts http(s) to loopback hosts, as the sandbox does, for local stacks. */
export function callbackUrlProblem(value: string, options: { allowLoopback?: boolean } = {}): string | undefined {
  if (value.length > CALLBACK_URL_MAX_LENGTH) return `must be at most ${CALLBACK_URL_MAX_LENGTH} characters`;
  const url = URL.parse(value);
  if (!url) return 'must be an absolute URL';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials (a username or password)';
  const host = normaliseHost(url.hostname);
  if (options.allowLoopback && isLoopbackHost(host)) {
    return url.protocol === 'https:' || url.protocol === 'http:' ? undefined : 'must be an http or https URL';
  }
  if (url.protocol !== 'https:') {
    return options.allowLoopback && url.protocol === 'http:'
      ? 'must be an https URL (plain http is allowed to loopback hosts only)'
      : 'must be an https URL';
  }
  if (!isPublicHost(host)) return 'must name a public host (not a private address or a local name)';
  return undefined;
}
