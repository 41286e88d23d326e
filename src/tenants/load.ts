/** The tenants of TENANTS_FILE, TENANTS_DIR (every `*.json` merged) or the single-key variables. Nothing is cached. */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parse, type ParseError } from 'jsonc-parser';
import { assertCredential, CredentialFormatError, type CredentialKind } from '../config/credentials.js';
import { ConfigError, loadConfig, readSecretFile, readSettingFile, readVariable, type Env } from '../config/env.js';
import { resolveSecretFiles, SERVICE_SECRETS } from '../config/env.js';
import {
  accountingEntry,
  complianceEntry,
  entrySource,
  linkEntry,
  parseEntry,
  stockInEntry,
  tenantsDocument,
  type KeySource,
} from './file-schema.js';
import { fromSingleKeyVariables, SINGLE_TENANT_VARIABLES } from './single-key.js';
import type { AccountingTenant, ComplianceTenant, StockInEntry, TenantLink, TenantsConfig } from './types.js';

export function loadTenantsConfig(rawEnv: Env): TenantsConfig {
  const file = readVariable(rawEnv, 'TENANTS_FILE');
  const dir = readVariable(rawEnv, 'TENANTS_DIR');
  if (file !== undefined && dir !== undefined)
    throw new ConfigError('TENANTS_FILE and TENANTS_DIR are both set: set one of them');
  if (file === undefined && dir === undefined) return fromSingleKeyVariables(rawEnv);
  const variable = file !== undefined ? 'TENANTS_FILE' : 'TENANTS_DIR';
  const documents = file !== undefined ? [readDocument('TENANTS_FILE', file)] : readDirectory(dir!);
  const { entries, namedVariables } = readEntries(documents, rawEnv);
  for (const name of SINGLE_TENANT_VARIABLES) {
    if (namedVariables.has(name)) continue;
    const set = [name, `${name}_FILE`].find((n) => readVariable(rawEnv, n) !== undefined);
    if (set !== undefined) {
      throw new ConfigError(
        `${set} is set but ${variable} is: a tenants file names every key, business and link ` +
          "(unset it, or name it as an entry's key source)",
      );
    }
  }
  return { ...entries, origin: `${variable} ${file ?? dir}` };
}

type TenantsDocument = ReturnType<typeof readDocument>;

function readDocument(variable: string, path: string) {
  const text = readSettingFile(variable, path, (file) => readFileSync(file, 'utf8'));
  const name = basename(path);
  // `baseDir`: where its relative key files are.
  return { name, content: parseJson(name, text), baseDir: dirname(path) };
}

/** Hidden entries are skipped: a Kubernetes secret mount also keeps its files in `..data` and a dated directory. */
function readDirectory(dir: string): TenantsDocument[] {
  const names = readSettingFile('TENANTS_DIR', dir, (path) => readdirSync(path));
  const files = names.filter((name) => name.endsWith('.json') && !name.startsWith('.')).sort();
  if (files.length === 0) throw new ConfigError(`TENANTS_DIR: ${dir} holds no *.json file`);
  return files.map((name) => readDocument('TENANTS_DIR', join(dir, name)));
}

/** JSON.parse's message quotes the text around the error, which may be a key: only line and column are said. */
function parseJson(name: string, text: string): unknown {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    const errors: ParseError[] = [];
    parse(body, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const offset = errors[0]?.offset;
    if (offset === undefined) throw new ConfigError(`${name}: not valid JSON`);
    const before = body.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    throw new ConfigError(`${name}: not valid JSON at line ${line}, column ${column}`);
  }
}

/** What loadConfig gets for one entry: the service settings (timeouts, signing), none of the single tenant's. */
function sharedSettings(env: Env): Env {
  const shared = { ...env };
  for (const name of [...SINGLE_TENANT_VARIABLES, 'COMPLIANCE_BASE_URL', 'ACCOUNTING_BASE_URL']) {
    delete shared[name];
    delete shared[`${name}_FILE`];
  }
  return shared;
}

/** loadConfig's rules for an entry, its messages prefixed with the entry. */
function serviceOf<T>(source: string, env: Env, pick: (config: ReturnType<typeof loadConfig>) => T | undefined): T {
  try {
    return pick(loadConfig(env))!;
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`${source}: ${err.message}`, { cause: err });
    throw err;
  }
}

/** TENANTS_RELOAD_SECONDS: how often a tenants file is read again; 0, never. */
export function tenantsReloadSeconds(env: Env): number {
  const raw = env.TENANTS_RELOAD_SECONDS?.trim();
  if (!raw) return 15;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds > 3600)
    throw new ConfigError(
      `TENANTS_RELOAD_SECONDS must be a whole number of seconds from 0 (never) to 3600, got "${raw}"`,
    );
  return seconds;
}

export function readEntries(documents: readonly TenantsDocument[], rawEnv: Env) {
  const env = resolveSecretFiles(rawEnv, SERVICE_SECRETS);
  const shared = sharedSettings(env);
  const namedVariables = new Set<string>();

  // The setting is the entry path, the only thing an error says of the key.
  const key = (document: TenantsDocument, source: KeySource, setting: string, kind: CredentialKind): string => {
    let value = source.value;
    if (source.env !== undefined) {
      namedVariables.add(source.env);
      value = readVariable(env, source.env);
      if (value === undefined) throw new ConfigError(`${setting}: environment variable ${source.env} is not set`);
    }
    if (value === undefined) {
      // Read as every `<NAME>_FILE` is; messages name the path, never the content.
      value = readSecretFile(setting, resolve(document.baseDir, source.file!).trim());
      if (!value) throw new ConfigError(`${setting}: the file is empty`);
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
  const stockIn: StockInEntry[] = [];
  const applications = { compliance: new Map<string, string>(), accounting: new Map<string, string>() };
  const servedBy = new Map<string, string>();
  const linkedBy = new Map<string, string>();
  const stockInBy = new Map<string, string>();

  const declare = (service: 'compliance' | 'accounting', application: string, source: string) => {
    const earlier = applications[service].get(application);
    if (earlier !== undefined)
      throw new ConfigError(`${source}: application ${application} is already declared by ${earlier}`);
    applications[service].set(application, source);
  };

  for (const document of documents) {
    const lists = parseEntry(tenantsDocument, document.content, document.name);
    lists.compliance.forEach((raw, index) => {
      const source = entrySource(document.name, 'compliance', index, raw);
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
      const serviceEnv = { ...shared, COMPLIANCE_BASE_URL: url, COMPLIANCE_API_KEY: apiKey };
      compliance.push({
        application: entry.application,
        service: serviceOf(source, serviceEnv, (c) => c.compliance),
        requestsPerMinute: entry.requestsPerMinute,
        businesses: entry.businesses,
        source,
      });
    });
    lists.accounting.forEach((raw, index) => {
      const source = entrySource(document.name, 'accounting', index, raw);
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
      const source = entrySource(document.name, 'links', index, raw);
      const entry = parseEntry(linkEntry, raw, source);
      const earlier = linkedBy.get(entry.business);
      if (earlier !== undefined)
        throw new ConfigError(`${source}: business ${entry.business} is already linked by ${earlier}`);
      linkedBy.set(entry.business, source);
      links.push({ businessId: entry.business, companyId: entry.company, accounting: entry.accounting, source });
    });
    lists.stockIn.forEach((raw, index) => {
      const source = entrySource(document.name, 'stockIn', index, raw);
      const { business, from, allOrNothing } = parseEntry(stockInEntry, raw, source);
      const earlier = stockInBy.get(business);
      if (earlier !== undefined)
        throw new ConfigError(`${source}: business ${business} is already named by ${earlier}`);
      stockInBy.set(business, source);
      stockIn.push({ businessId: business, settings: { from, allOrNothing }, source });
    });
  }
  // Checked once every file is read: a link may name an application another file declares.
  for (const link of links) {
    if (!applications.accounting.has(link.accounting)) {
      throw new ConfigError(`${link.source}: accounting application ${link.accounting} is not declared`);
    }
  }
  return { entries: { compliance, accounting, links, stockIn }, namedVariables };
}
