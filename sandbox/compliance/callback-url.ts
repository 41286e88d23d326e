import { isIP } from 'node:net';

const MAX_CALLBACK_URL_LENGTH = 2048;

/**
 * Why `value` cannot be a callback URL (C48), or undefined when it can: compliance-api.md, POST /v1/credit-notes
 * `callbackUrl` and Limits ("Absolute https URL on a public host, no credentials in it; maximum 2048 characters").
 * The sandbox also takes `http`/`https` to loopback hosts so local stacks and tests can receive callbacks.
 *
 * The emulator's own reading, not the client's src/compliance/callback-url.ts: shared code would make a
 * misreading of the contract pass in both, where two readings disagree in tests. The messages use the same words.
 */
export function callbackUrlProblem(value: string): string | undefined {
  if (value.length > MAX_CALLBACK_URL_LENGTH) return `must be at most ${MAX_CALLBACK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials (a username or password)';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isLoopback(host)) return undefined;
  if (url.protocol !== 'https:') return 'must be an https URL (plain http is allowed to loopback hosts only)';
  if (!isPublicHost(host)) return 'must name a public host (not a private address or a local name)';
  return undefined;
}

function isLoopback(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

function isPublicHost(host: string): boolean {
  const family = isIP(host);
  if (family === 4) {
    const [a = 0, b = 0] = host.split('.').map(Number);
    const privateRange =
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224;
    return !privateRange;
  }
  if (family === 6) {
    return !(host === '::' || /^f[cd]/.test(host) || /^fe[89ab]/.test(host) || host.startsWith('::ffff:'));
  }
  // A single-label name (intranet) or a reserved suffix is not public.
  return host.includes('.') && !/\.(local|internal|lan|home|corp|localdomain)$/.test(host);
}
