/**
 * Which failures of a start-up check are an outage (the worker starts and asks again) and which stop the start: a
 * refused connection, a name that does not resolve or a timeout look to a running fleet exactly like a 503.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { isOutage } from '../../src/tenants/probes.js';

function apiError(status: number | undefined, code: string): ApiError {
  return new ApiError({
    service: 'compliance',
    operation: 'getIdentity',
    method: 'GET',
    path: '/identity',
    ...(status === undefined ? {} : { status }),
    code,
    message: code,
    retry: 'safe',
    requestSent: status !== undefined,
  });
}

describe('isOutage', () => {
  it.each([
    [503, 'service_unavailable'],
    [500, 'internal_error'],
    [502, 'bad_gateway'],
    [408, 'request_timeout'],
    [429, 'rate_limited'],
    [undefined, 'network_error'],
    [undefined, 'timeout'],
    [undefined, 'connection_reset'],
  ])('%s %s is an outage', (status, code) => {
    expect(isOutage(apiError(status, code))).toBe(true);
  });

  it.each([
    [401, 'invalid_api_key'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [400, 'invalid_request'],
  ])('%s %s is not', (status, code) => {
    expect(isOutage(apiError(status, code))).toBe(false);
  });

  it('is not a request cancelled here, nor an error that is not the service’s answer', () => {
    expect(isOutage(apiError(undefined, 'aborted'))).toBe(false);
    expect(isOutage(new Error('the compliance base URL must be an absolute http(s) URL'))).toBe(false);
  });
});
