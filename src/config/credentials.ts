/** Errors never repeat the value: a secret pasted into the wrong variable must not end up in logs. */

const TAIL = '[A-Za-z0-9_-]{16,}';

const CREDENTIAL_FORMATS = {
  complianceApiKey: {
    pattern: new RegExp(`^cmp_sk_(test|live)_${TAIL}$`),
    expected: 'cmp_sk_test_… or cmp_sk_live_… followed by at least 16 letters, digits, _ or -',
  },
  accountingApiKey: {
    pattern: new RegExp(`^sk_(development|production)_${TAIL}$`),
    expected: 'sk_development_… or sk_production_… followed by at least 16 letters, digits, _ or -',
  },
  accountingClientSecret: {
    pattern: new RegExp(`^cs_${TAIL}$`),
    expected: 'cs_… followed by at least 16 letters, digits, _ or -',
  },
  accountingClientId: {
    pattern: /^client_[A-Za-z0-9_-]{4,}$/,
    expected: 'client_… followed by at least 4 letters, digits, _ or -',
  },
  accountingWebhookSecret: {
    pattern: /^whsec_(development_|production_)?[A-Za-z0-9+/]{16,}={0,2}$/,
    expected: 'whsec_development_…, whsec_production_… or whsec_… followed by base64 text',
  },
} satisfies Record<string, { pattern: RegExp; expected: string }>;
export type CredentialKind = keyof typeof CREDENTIAL_FORMATS;

export class CredentialFormatError extends Error {
  override readonly name = 'CredentialFormatError';

  constructor(
    readonly setting: string,
    readonly expected: string,
  ) {
    super(`${setting} is not in the expected form (${expected}); the value is not shown`);
  }
}

export function assertCredential(kind: CredentialKind, setting: string, value: string): string {
  const format = CREDENTIAL_FORMATS[kind];
  if (!format.pattern.test(value)) throw new CredentialFormatError(setting, format.expected);
  return value;
}
