/**
 * The documented callback URL rule (compliance-api.md, POST /v1/credit-notes `callbackUrl` and Limits: "Absolute
 * https URL on a public host, no credentials in it; maximum 2048 characters"; C48). The sandbox also accepts
 * `http`/`https` to loopback hosts so local stacks can receive callbacks; `allowLoopback` mirrors that for local
 * use only.
 *
 * Not shared with sandbox/compliance/callback-url.ts on purpose: the sandbox emulates the service and reads the
 * contract on its own, so a misreading shows up as the two disagreeing in tests instead of hiding in both. The
 * messages use the same words.
 */
import { BlockList, isIP } from 'node:net';
import { isLoopbackHost } from '../http/base-url.js';

export const CALLBACK_URL_MAX_LENGTH = 2048;

export interface CallbackUrlOptions {
  /** Also accept http(s) URLs whose host is loopback (localhost, 127.0.0.0/8, ::1). */
  allowLoopback?: boolean;
}

/** Addresses that are not reachable on the public internet (RFC 6890 special-purpose ranges). */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Name suffixes that only resolve inside a private network (or nowhere). */
const PRIVATE_NAME_SUFFIXES = [
  'localhost',
  'local',
  'localdomain',
  'internal',
  'intranet',
  'lan',
  'home.arpa',
  'corp',
  'private',
  'test',
  'invalid',
];

function hasSuffix(host: string, suffix: string): boolean {
  return host === suffix || host.endsWith(`.${suffix}`);
}

/** Lower-case host without IPv6 brackets or a trailing root dot (`localhost.` is still localhost). */
function normaliseHost(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

function ipFamily(host: string): 'ipv4' | 'ipv6' | undefined {
  const version = isIP(host);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

function isPublicHost(host: string): boolean {
  const family = ipFamily(host);
  if (family) return !NON_PUBLIC.check(host, family);
  // A single-label name (no dot) is resolved by local search domains, never on the public internet.
  if (!host.includes('.')) return false;
  return !PRIVATE_NAME_SUFFIXES.some((suffix) => hasSuffix(host, suffix));
}

/** Why `value` is not an acceptable callback URL, or undefined when it is. */
export function callbackUrlProblem(value: string, options: CallbackUrlOptions = {}): string | undefined {
  if (value.length > CALLBACK_URL_MAX_LENGTH) return `must be at most ${CALLBACK_URL_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
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
