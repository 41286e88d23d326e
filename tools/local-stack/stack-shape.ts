/**
 * What a local stack serves, read from the environment alone: its two merchants (the default), the environment's
 * tenants file, or one key per service as before tenants. A single-key setting only means something for one key,
 * so any of them set asks for that stack rather than being refused beside the merchants' tenants file.
 */
import { SINGLE_TENANT_VARIABLES } from '../../src/tenants/single-key.js';
import type { Env } from '../../src/config/env.js';

export type StackShape =
  /** Two merchants on two keys, from a tenants file the stack writes for its own sandbox. */
  | { kind: 'merchants' }
  /** The tenants of TENANTS_FILE / TENANTS_DIR. */
  | { kind: 'tenants'; variable: 'TENANTS_FILE' | 'TENANTS_DIR' }
  /** One key per service (the embedded sandbox for those not configured); `because` names the setting that asked. */
  | { kind: 'single-key'; because: string };

/** The settings of the one-key stack (each also as NAME_FILE where it is a secret). */
export const SINGLE_KEY_SETTINGS = [
  'SANDBOX',
  'COMPLIANCE_BASE_URL',
  'ACCOUNTING_BASE_URL',
  ...SINGLE_TENANT_VARIABLES,
] as const;

const isSet = (env: Env, name: string) => Boolean(env[name]?.trim());

export function stackShape(env: Env): StackShape {
  // Both set is the worker's error to say (loadTenantsConfig), with the same words as everywhere else.
  if (isSet(env, 'TENANTS_FILE')) return { kind: 'tenants', variable: 'TENANTS_FILE' };
  if (isSet(env, 'TENANTS_DIR')) return { kind: 'tenants', variable: 'TENANTS_DIR' };
  const because = SINGLE_KEY_SETTINGS.flatMap((name) => [name, `${name}_FILE`]).find((name) => isSet(env, name));
  return because === undefined ? { kind: 'merchants' } : { kind: 'single-key', because };
}
