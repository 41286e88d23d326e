/**
 * The entries of tenants files: checked, keys read from their sources, every name, business and link declared once.
 * Errors name the file and entry (`tenants.json: compliance[1] (retail-group): apiKey`), never a key.
 */
import { resolve } from 'node:path';
import { assertCredential, CredentialFormatError, type CredentialKind } from '../config/credentials.js';
import { ConfigError, loadConfig, readVariable, resolveSecretFiles, SERVICE_SECRETS } from '../config/env.js';
import {
  accountingEntry,
  APPLICATION,
  complianceEntry,
  documentLists,
  entrySource,
  ID,
  linkEntry,
  parseEntry,
  type KeySource,
} from './schema.js';
import { SINGLE_TENANT_VARIABLES } from './single-key.js';
import type { AccountingTenant, ComplianceTenant, TenantLink, TenantsConfig } from './types.js';
import type { Env } from '../config/env.js';

/** `baseDir`: where its relative key files are. */
export interface TenantsDocument {
  name: string;
  content: unknown;
  baseDir: string;
}

type TenantEntries = Pick<TenantsConfig, 'compliance' | 'accounting' | 'links'>;

/** What loadConfig gets for one entry: the service settings (timeouts, signing), none of the single tenant's. */
function sharedSettings(env: Env): Env {
  const shared = { ...env };
  for (const name of [...SINGLE_TENANT_VARIABLES, 'COMPLIANCE_BASE_URL', 'ACCOUNTING_BASE_URL']) {
    delete shared[name];
    delete shared[`${name}_FILE`];
  }
  return shared;
}

/** loadConfig's rules for an entry, its messages (which name settings of the environment) prefixed with the entry. */
function serviceOf<T>(source: string, env: Env, pick: (config: ReturnType<typeof loadConfig>) => T | undefined): T {
  try {
    // Defined: the entry gives loadConfig both the base URL and the key.
    return pick(loadConfig(env))!;
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`${source}: ${err.message}`, { cause: err });
    throw err;
  }
}

export function readEntries(
  documents: readonly TenantsDocument[],
  rawEnv: Env,
): { entries: TenantEntries; namedVariables: Set<string> } {
  const env = resolveSecretFiles(rawEnv, SERVICE_SECRETS);
  const shared = sharedSettings(env);
  const namedVariables = new Set<string>();

  // The setting is the entry path, the only thing an error says of the key.
  const key = (document: TenantsDocument, source: KeySource, setting: string, kind: CredentialKind): string => {
    let value: string;
    if (source.value !== undefined) {
      value = source.value;
    } else if (source.env !== undefined) {
      namedVariables.add(source.env);
      const set = readVariable(env, source.env);
      if (set === undefined) throw new ConfigError(`${setting}: environment variable ${source.env} is not set`);
      value = set;
    } else {
      value = readKeyFile(setting, resolve(document.baseDir, source.file!));
    }
    try {
      return assertCredential(kind, setting, value);
    } catch (err) {
      if (err instanceof CredentialFormatError) throw new ConfigError(err.message);
      throw err;
    }
  };

  const compliance: ComplianceTenant[] = [];
  const accounting: AccountingTenant[] = [];
  const links: TenantLink[] = [];
  const applications = { compliance: new Map<string, string>(), accounting: new Map<string, string>() };
  const servedBy = new Map<string, string>();
  const linkedBy = new Map<string, string>();

  const declare = (service: 'compliance' | 'accounting', application: string, source: string) => {
    const earlier = applications[service].get(application);
    if (earlier !== undefined)
      throw new ConfigError(`${source}: application ${application} is already declared by ${earlier}`);
    applications[service].set(application, source);
  };

  for (const document of documents) {
    const lists = documentLists(document);
    lists.compliance.forEach((raw, index) => {
      const source = entrySource(document, 'compliance', index, raw, 'application', APPLICATION);
      const entry = parseEntry(complianceEntry, raw, source);
      declare('compliance', entry.application, source);
      for (const business of entry.businesses ?? []) {
        if (entry.businesses!.indexOf(business) !== entry.businesses!.lastIndexOf(business)) {
          throw new ConfigError(`${source}: businesses: ${business} is listed twice`);
        }
        const earlier = servedBy.get(business);
        if (earlier !== undefined)
          throw new ConfigError(`${source}: business ${business} is already served by ${earlier}`);
        servedBy.set(business, source);
      }
      const url = entry.baseUrl ?? readVariable(env, 'COMPLIANCE_BASE_URL');
      if (url === undefined) throw new ConfigError(`${source}: baseUrl: not set, nor is COMPLIANCE_BASE_URL`);
      const apiKey = key(document, entry.apiKey, `${source}: apiKey`, 'complianceApiKey');
      const service = serviceOf(
        source,
        { ...shared, COMPLIANCE_BASE_URL: url, COMPLIANCE_API_KEY: apiKey },
        (c) => c.compliance,
      );
      compliance.push({
        application: entry.application,
        service,
        requestsPerMinute: entry.requestsPerMinute,
        businesses: entry.businesses,
        source,
      });
    });
    lists.accounting.forEach((raw, index) => {
      const source = entrySource(document, 'accounting', index, raw, 'application', APPLICATION);
      const entry = parseEntry(accountingEntry, raw, source);
      declare('accounting', entry.application, source);
      const url = entry.baseUrl ?? readVariable(env, 'ACCOUNTING_BASE_URL');
      if (url === undefined) throw new ConfigError(`${source}: baseUrl: not set, nor is ACCOUNTING_BASE_URL`);
      const optional = (field: 'clientSecret' | 'clientId' | 'webhookSecret', kind: CredentialKind) => {
        const from = entry[field];
        return from === undefined ? undefined : key(document, from, `${source}: ${field}`, kind);
      };
      const serviceEnv: Env = {
        ...shared,
        ACCOUNTING_BASE_URL: url,
        ACCOUNTING_API_KEY: key(document, entry.apiKey, `${source}: apiKey`, 'accountingApiKey'),
        ACCOUNTING_CLIENT_SECRET: optional('clientSecret', 'accountingClientSecret'),
        ACCOUNTING_CLIENT_ID: optional('clientId', 'accountingClientId'),
        ACCOUNTING_WEBHOOK_SECRET: optional('webhookSecret', 'accountingWebhookSecret'),
      };
      accounting.push({
        application: entry.application,
        service: serviceOf(source, serviceEnv, (c) => c.accounting),
        source,
      });
    });
    lists.links.forEach((raw, index) => {
      const source = entrySource(document, 'links', index, raw, 'business', ID);
      const entry = parseEntry(linkEntry, raw, source);
      const earlier = linkedBy.get(entry.business);
      if (earlier !== undefined)
        throw new ConfigError(`${source}: business ${entry.business} is already linked by ${earlier}`);
      linkedBy.set(entry.business, source);
      links.push({ businessId: entry.business, companyId: entry.company, accounting: entry.accounting, source });
    });
  }
  // Checked once every file is read: a link may name an application another file declares.
  for (const link of links) {
    if (!applications.accounting.has(link.accounting)) {
      throw new ConfigError(`${link.source}: accounting application ${link.accounting} is not declared`);
    }
  }
  return { entries: { compliance, accounting, links }, namedVariables };
}

/** Read as every `<NAME>_FILE` is (size cap, trailing newline dropped); messages name the path, never the content. */
function readKeyFile(setting: string, path: string): string {
  let value: string | undefined;
  try {
    value = resolveSecretFiles({ COMPLIANCE_API_KEY_FILE: path }, ['COMPLIANCE_API_KEY']).COMPLIANCE_API_KEY;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(`${setting}: ${err.message.replace(/^COMPLIANCE_API_KEY_FILE: /, '')}`, { cause: err });
  }
  if (!value) throw new ConfigError(`${setting}: the file is empty`);
  return value;
}
