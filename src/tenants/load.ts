/** The tenants of TENANTS_FILE, TENANTS_DIR (every `*.json` merged) or the single-key variables. Nothing is cached. */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parse, type ParseError } from 'jsonc-parser';
import { ConfigError, readVariable as readSetting, type Env } from '../config/env.js';
import { readEntries, type TenantsDocument } from './entries.js';
import { fromSingleKeyVariables, SINGLE_TENANT_VARIABLES } from './single-key.js';
import type { TenantsConfig } from './types.js';

export function loadTenantsConfig(rawEnv: Env): TenantsConfig {
  const file = readSetting(rawEnv, 'TENANTS_FILE');
  const dir = readSetting(rawEnv, 'TENANTS_DIR');
  if (file !== undefined && dir !== undefined)
    throw new ConfigError('TENANTS_FILE and TENANTS_DIR are both set: set one of them');
  if (file === undefined && dir === undefined) return fromSingleKeyVariables(rawEnv);
  const variable = file !== undefined ? 'TENANTS_FILE' : 'TENANTS_DIR';
  const documents = file !== undefined ? [readDocument('TENANTS_FILE', file)] : readDirectory(dir!);
  const { entries, namedVariables } = readEntries(documents, rawEnv);
  for (const name of SINGLE_TENANT_VARIABLES) {
    if (namedVariables.has(name)) continue;
    const set = [name, `${name}_FILE`].find((n) => readSetting(rawEnv, n) !== undefined);
    if (set !== undefined) {
      throw new ConfigError(
        `${set} is set but ${variable} is: a tenants file names every key, business and link ` +
          "(unset it, or name it as an entry's key source)",
      );
    }
  }
  return { ...entries, origin: `${variable} ${file ?? dir}` };
}

function readDocument(variable: string, path: string): TenantsDocument {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  const name = basename(path);
  return { name, content: parseJson(name, text), baseDir: dirname(path) };
}

/** Hidden entries are skipped: a Kubernetes secret mount also keeps its files in `..data` and a dated directory. */
function readDirectory(dir: string): TenantsDocument[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new ConfigError(`TENANTS_DIR: cannot read ${dir} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
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
