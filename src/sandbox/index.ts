/** The sandbox's public surface: start it, describe its world, inspect and steer it. */
export { startSandbox, type Sandbox, type StartSandboxOptions } from './server.js';
export { SandboxFixtureSchema, FixtureError, loadFixture, parseFixture, type SandboxFixture, type SandboxFixtureInput } from './fixture.js';
export { DEMO, defaultComplianceFixture, defaultComplianceFixtureInput } from './default-fixture.js';
export {
  ComplianceFixtureSchema,
  AuthorityRuleSchema,
  type ComplianceFixture,
  type ComplianceFixtureInput,
  type AuthorityRule,
  type AuthorityRuleInput,
} from './compliance/fixture-schema.js';
export { buildComplianceApp, type ComplianceAppOptions } from './compliance/app.js';
export { CALLBACK_USER_AGENT } from './compliance/callbacks.js';
export {
  SandboxInspector,
  InspectionError,
  type CallbackAttempt,
  type InspectedAuthorityRule,
  type InspectedDocument,
  type RequestsSummary,
  type StockLevel,
} from './inspector.js';
export { FaultEngine, FaultRuleSchema, type FaultRule, type FaultRuleInput } from './shared/faults.js';
export { RequestStats, type RequestRecord } from './shared/request-stats.js';
export {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_ID,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
  DEMO_COMPANY_IDS,
} from './accounting/default-fixture.js';
