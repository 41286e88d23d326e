// The two forms of the path: docs/contract-assumptions.md, C48. Base64url costs 4/3 of the id's bytes, percent-encoding
// up to 3. The MAC covers the id itself, so both forms verify alike.
import { CALLBACK_URL_MAX_LENGTH } from '../compliance/callback-url.js';

export const CALLBACK_PATH_PREFIX = '/callbacks/';
const COMPACT_MARKER = 'b64';

/** Temporal's default `limit.maxIDLengthLimit`: no longer workflow id can be created on a default server. */
export const WORKFLOW_ID_MAX_BYTES = 1_000;
/** The longest token: `<expiry, at most 11 base-36 digits>.<43 base64url characters>`. */
const TOKEN_MAX_LENGTH = 55;
/** The longest base URL with which a callback URL for any workflow id of `WORKFLOW_ID_MAX_BYTES` fits the limit. */
export const PUBLIC_BASE_URL_MAX_LENGTH =
  CALLBACK_URL_MAX_LENGTH -
  `${CALLBACK_PATH_PREFIX}${COMPACT_MARKER}/`.length -
  Math.ceil((WORKFLOW_ID_MAX_BYTES * 4) / 3) -
  1 -
  TOKEN_MAX_LENGTH;

export function callbackPath(baseUrlLength: number, workflowId: string, token: string): string {
  const percent = `${CALLBACK_PATH_PREFIX}${encodeURIComponent(workflowId)}/${token}`;
  if (baseUrlLength + percent.length <= CALLBACK_URL_MAX_LENGTH) return percent;
  return `${CALLBACK_PATH_PREFIX}${COMPACT_MARKER}/${Buffer.from(workflowId, 'utf8').toString('base64url')}/${token}`;
}

/** `rest`: the part after `/callbacks/`, without a query. */
export function parseCallbackPath(rest: string): { workflowId: string; token: string } | undefined {
  const segments = rest.split('/');
  const token = segments[segments.length - 1];
  let workflowId: string | undefined;
  try {
    if (segments.length === 2) workflowId = decodeURIComponent(segments[0]!);
    else if (segments.length === 3 && segments[0] === COMPACT_MARKER) workflowId = decodeBase64url(segments[1]!);
  } catch {
    return undefined; // not percent-encoded UTF-8, or not UTF-8
  }
  return workflowId && token ? { workflowId, token } : undefined;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Only the canonical encoding of valid UTF-8 (else it throws): Node's decoder is lenient, and one id has one URL. */
function decodeBase64url(segment: string): string | undefined {
  const bytes = Buffer.from(segment, 'base64url');
  return bytes.toString('base64url') === segment ? strictUtf8.decode(bytes) : undefined;
}
