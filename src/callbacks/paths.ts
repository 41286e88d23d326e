// A callback URL's path (C48): `/callbacks/<id, percent-encoded>/<token>` when the whole URL fits the service's limit,
// else `/callbacks/b64/<id as base64url of its UTF-8>/<token>` (4/3 of the id's bytes, where percent-encoding costs
// up to 3). The MAC covers the id itself, so both forms verify alike.
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

export function callbackPath(
  baseUrlLength: number,
  workflowId: string,
  token: string,
  maxUrlLength = CALLBACK_URL_MAX_LENGTH,
): string {
  const percent = `${CALLBACK_PATH_PREFIX}${encodeURIComponent(workflowId)}/${token}`;
  if (baseUrlLength + percent.length <= maxUrlLength) return percent;
  return `${CALLBACK_PATH_PREFIX}${COMPACT_MARKER}/${Buffer.from(workflowId, 'utf8').toString('base64url')}/${token}`;
}

/** `rest`: the part after `/callbacks/`, without a query. */
export function parseCallbackPath(rest: string): { workflowId: string; token: string } | undefined {
  const segments = rest.split('/');
  if (segments.length === 2) {
    const [encoded = '', token = ''] = segments;
    let workflowId: string | undefined;
    try {
      workflowId = decodeURIComponent(encoded);
    } catch {
      return undefined;
    }
    return workflowId && token ? { workflowId, token } : undefined;
  }
  if (segments.length === 3 && segments[0] === COMPACT_MARKER) {
    const [, encoded = '', token = ''] = segments;
    const workflowId = decodeBase64url(encoded);
    return workflowId && token ? { workflowId, token } : undefined;
  }
  return undefined;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Only the canonical encoding of valid UTF-8: Node's decoder is lenient, and one id must have one URL. */
function decodeBase64url(segment: string): string | undefined {
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) return undefined;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
