/**
 * What a local stack serves (`npm start`, `npm run demo`): its two merchants unless the environment says otherwise.
 */
import { describe, expect, it } from 'vitest';
import { SINGLE_KEY_SETTINGS, stackShape } from '../../tools/local-stack/stack-shape.js';

describe('the local stack shape', () => {
  it('serves its two merchants when nothing of a service is configured', () => {
    expect(stackShape({})).toEqual({ kind: 'merchants' });
    // Settings every shape shares do not change it.
    expect(
      stackShape({
        LOG_LEVEL: 'debug',
        PAYLOAD_KEYS_FILE: '/k',
        COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
        PURCHASES_SINK: 'file:/p',
        TENANTS_FILE: '  ',
      }),
    ).toEqual({ kind: 'merchants' });
  });

  it("serves the environment's tenants file", () => {
    expect(stackShape({ TENANTS_FILE: '/t.json' })).toEqual({ kind: 'tenants', variable: 'TENANTS_FILE' });
    expect(stackShape({ TENANTS_DIR: '/t', SANDBOX: 'embedded' })).toEqual({
      kind: 'tenants',
      variable: 'TENANTS_DIR',
    });
  });

  it('serves one key per service when any single-key setting is set, and names it', () => {
    for (const name of SINGLE_KEY_SETTINGS) {
      expect(stackShape({ [name]: 'x' }), name).toEqual({ kind: 'single-key', because: name });
    }
    expect(stackShape({ ACCOUNTING_WEBHOOK_SECRET_FILE: '/s' })).toEqual({
      kind: 'single-key',
      because: 'ACCOUNTING_WEBHOOK_SECRET_FILE',
    });
  });
});
