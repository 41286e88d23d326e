/**
 * How a callback URL's path names the workflow. Two forms, told apart by their number of segments:
 *
 * - `/callbacks/<workflow id, percent-encoded>/<token>`: every URL handed out before this module, and still the
 *   form minted whenever the whole URL fits the service's limit (so a retried request keeps a byte-identical body,
 *   C61, and URLs held by the service for running sales keep working);
 * - `/callbacks/b64/<workflow id as base64url of its UTF-8>/<token>`: when the percent-encoded URL would exceed the
 *   limit. Base64url costs 4/3 of the id's bytes where percent-encoding costs up to 3 (emoji), so an id of
 *   `WORKFLOW_ID_MAX_BYTES` (Temporal's default limit) always fits with a base URL of up to
 *   `PUBLIC_BASE_URL_MAX_LENGTH` characters.
 *
 * The token's MAC covers the workflow id itself, not its encoding, so both forms verify with the same token.
 */
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
  base64urlLength(WORKFLOW_ID_MAX_BYTES) -
  1 -
  TOKEN_MAX_LENGTH;

/** The path of a callback URL: percent-encoded when the whole URL fits `maxUrlLength`, otherwise the compact form. */
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

/**
 * The workflow id and token of a callback path, given the part after `/callbacks/` (without a query); undefined
 * for any other shape, or an encoding that does not decode exactly.
 */
export function parseCallbackPath(rest: string): { workflowId: string; token: string } | undefined {
  const segments = rest.split('/');
  if (segments.length === 2) {
    const [encoded = '', token = ''] = segments;
    const workflowId = decodePercent(encoded);
    return workflowId && token ? { workflowId, token } : undefined;
  }
  if (segments.length === 3 && segments[0] === COMPACT_MARKER) {
    const [, encoded = '', token = ''] = segments;
    const workflowId = decodeBase64url(encoded);
    return workflowId && token ? { workflowId, token } : undefined;
  }
  return undefined;
}

function decodePercent(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
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

function base64urlLength(bytes: number): number {
  return Math.ceil((bytes * 4) / 3);
}
