import {
  AuthorityRuleSchema,
  ItemNeedsRuleSchema,
  type AuthorityErrorCode,
  type AuthorityRule,
  type AuthorityRuleInput,
  type ComplianceFixture,
  type DocumentType,
  type ItemNeedsRule,
  type ItemNeedsRuleInput,
} from './fixture-schema.js';
import type { InspectedAuthorityRule } from './inspection-types.js';
import type { AuthorityCause } from './model.js';

/** What the authority is shown of a document. */
export interface Submission {
  documentId: string;
  documentType: DocumentType;
  businessId: string;
  traderInvoiceNumber: string;
  customerPin: string | null;
  lines: ReadonlyArray<{ itemId: string; registered: boolean }>;
}

export type Decision =
  | { outcome: 'accept'; delayMs: number; ruleId: string | null }
  | { outcome: 'reject'; delayMs: number; ruleId: string | null; causes: AuthorityCause[] }
  | { outcome: 'async'; delayMs: number; ruleId: string | null; settle: 'completed' }
  | { outcome: 'async'; delayMs: number; ruleId: string | null; settle: 'failed'; causes: AuthorityCause[] };

const DEFAULT_MESSAGES: Record<AuthorityErrorCode, string> = {
  authority_unavailable: 'The tax authority is temporarily unavailable; retry the document later',
  invalid_customer_pin: 'The customer PIN is not registered with the tax authority',
  authority_rejected: 'The tax authority rejected the document',
};

export function causeFor(code: AuthorityErrorCode, message?: string): AuthorityCause {
  return {
    code,
    message: message ?? DEFAULT_MESSAGES[code],
    ...(code === 'invalid_customer_pin' ? { field: 'customer.pin' } : {}),
  };
}

interface ActiveRule {
  rule: AuthorityRule & { id: string };
  source: 'fixture' | 'runtime';
  applied: number;
  perDocument: Map<string, number>;
  traderInvoiceNumber: RegExp | undefined;
  customerPin: RegExp | undefined;
}

/**
 * The simulated tax authority's decisions (C33, C37). An item that is not registered is always refused
 * (item_not_registered, one cause per line). Otherwise the first matching rule that is not used up
 * decides, runtime rules before fixture rules; no rule: the default outcome. `times` counts the
 * submissions a rule decided, over all documents (`timesPer: rule`) or per document.
 */
export class SimulatedAuthority {
  private fixtureRules: ActiveRule[] = [];
  private runtimeRules: ActiveRule[] = [];
  private nextRuleId = 1;
  private runtimeItemNeeds: ItemNeedsRule[] = [];

  constructor(private readonly config: ComplianceFixture['authority']) {
    this.reset();
  }

  reset(): void {
    this.nextRuleId = 1;
    this.runtimeRules = [];
    this.runtimeItemNeeds = [];
    this.fixtureRules = this.config.rules.map((rule) => this.activate(rule, 'fixture'));
  }

  rules(): InspectedAuthorityRule[] {
    return [...this.runtimeRules, ...this.fixtureRules].map((active) => ({
      ...structuredClone(active.rule),
      source: active.source,
      applied: active.applied,
    }));
  }

  /** Adds a rule ahead of the fixture's (and of earlier runtime rules); throws a ZodError for a bad rule. */
  addRule(input: AuthorityRuleInput): InspectedAuthorityRule {
    const active = this.activate(AuthorityRuleSchema.parse(input), 'runtime');
    this.runtimeRules = [active, ...this.runtimeRules.filter((r) => r.rule.id !== active.rule.id)];
    return { ...structuredClone(active.rule), source: 'runtime', applied: 0 };
  }

  removeRule(id: string): boolean {
    const before = this.runtimeRules.length + this.fixtureRules.length;
    this.runtimeRules = this.runtimeRules.filter((r) => r.rule.id !== id);
    this.fixtureRules = this.fixtureRules.filter((r) => r.rule.id !== id);
    return this.runtimeRules.length + this.fixtureRules.length !== before;
  }

  /** The item-needs rules, the fixture's then those added at run time. */
  itemNeedsRules(): ItemNeedsRule[] {
    return structuredClone([...this.config.itemNeeds, ...this.runtimeItemNeeds]);
  }

  addItemNeedsRule(input: ItemNeedsRuleInput): ItemNeedsRule {
    const rule = ItemNeedsRuleSchema.parse(input);
    this.runtimeItemNeeds.push(rule);
    return structuredClone(rule);
  }

  clearItemNeedsRules(): void {
    this.runtimeItemNeeds = [];
  }

  /** What the authority will not take for a new item, by the rules matching it. */
  itemNeeds(businessId: string, externalId: string): { productType: boolean; classificationMapping: boolean } {
    const matching = [...this.config.itemNeeds, ...this.runtimeItemNeeds].filter(
      (rule) =>
        (rule.businessId === undefined || rule.businessId === businessId) &&
        new RegExp(rule.externalId).test(externalId),
    );
    return {
      productType: matching.some((rule) => rule.productType),
      classificationMapping: matching.some((rule) => rule.classificationMapping),
    };
  }

  /** Removes the rules added at run time; the fixture's stay. */
  clearRuntimeRules(): void {
    this.runtimeRules = [];
  }

  decide(submission: Submission): Decision {
    const unregistered = submission.lines.flatMap((line, index) => (line.registered ? [] : [{ line, index }]));
    if (unregistered.length > 0) {
      return {
        outcome: 'reject',
        delayMs: 0,
        ruleId: null,
        causes: unregisteredCauses(this.config.unregisteredItemCause, unregistered),
      };
    }
    const active = [...this.runtimeRules, ...this.fixtureRules].find(
      (candidate) => matches(candidate, submission) && !usedUp(candidate, submission.documentId),
    );
    if (!active) return this.fromOutcome(this.config.defaultOutcome, undefined);
    active.applied += 1;
    active.perDocument.set(submission.documentId, (active.perDocument.get(submission.documentId) ?? 0) + 1);
    return this.fromOutcome(active.rule.outcome, active.rule);
  }

  private fromOutcome(outcome: AuthorityRule['outcome'], rule: AuthorityRule | undefined): Decision {
    const ruleId = rule?.id ?? null;
    switch (outcome) {
      case 'accept':
        return { outcome, delayMs: rule?.delayMs ?? 0, ruleId };
      case 'reject':
        return {
          outcome,
          delayMs: rule?.delayMs ?? 0,
          ruleId,
          causes: [causeFor(rule?.errorCode ?? 'authority_rejected', rule?.message)],
        };
      case 'async': {
        const delayMs = rule?.delayMs ?? this.config.asyncDelayMs;
        if ((rule?.asyncOutcome ?? 'completed') === 'completed')
          return { outcome, delayMs, ruleId, settle: 'completed' };
        const cause = causeFor(rule?.errorCode ?? 'authority_unavailable', rule?.message);
        return { outcome, delayMs, ruleId, settle: 'failed', causes: [cause] };
      }
    }
  }

  private activate(rule: AuthorityRule, source: ActiveRule['source']): ActiveRule {
    const id = rule.id ?? this.freshId();
    return {
      rule: { ...rule, id },
      source,
      applied: 0,
      perDocument: new Map(),
      traderInvoiceNumber:
        rule.match.traderInvoiceNumber === undefined ? undefined : new RegExp(rule.match.traderInvoiceNumber),
      customerPin: rule.match.customerPin === undefined ? undefined : new RegExp(rule.match.customerPin),
    };
  }

  private freshId(): string {
    const taken = new Set([
      ...[...this.runtimeRules, ...this.fixtureRules].map((r) => r.rule.id),
      ...this.config.rules.flatMap((r) => (r.id === undefined ? [] : [r.id])),
    ]);
    let id: string;
    do id = `rule-${this.nextRuleId++}`;
    while (taken.has(id));
    return id;
  }
}

/**
 * One cause per unregistered line under the contract's own code; under another (the fixture's
 * `unregisteredItemCause`), one cause that names neither item nor line, as a service with its own wording might.
 */
function unregisteredCauses(
  code: string,
  unregistered: Array<{ line: Submission['lines'][number]; index: number }>,
): AuthorityCause[] {
  if (code !== 'item_not_registered')
    return [{ code, message: 'The document names an article the tax authority does not know' }];
  return unregistered.map(({ line, index }) => ({
    code,
    field: `lines[${index}].itemId`,
    itemId: line.itemId,
    message: `Item ${line.itemId} is not registered with the tax authority`,
  }));
}

function matches(active: ActiveRule, submission: Submission): boolean {
  const { match } = active.rule;
  if (match.businessId !== undefined && match.businessId !== submission.businessId) return false;
  if (match.documentType !== undefined && match.documentType !== submission.documentType) return false;
  if (match.itemId !== undefined && !submission.lines.some((line) => line.itemId === match.itemId)) return false;
  if (active.traderInvoiceNumber && !active.traderInvoiceNumber.test(submission.traderInvoiceNumber)) return false;
  if (active.customerPin && (submission.customerPin === null || !active.customerPin.test(submission.customerPin)))
    return false;
  return true;
}

function usedUp(active: ActiveRule, documentId: string): boolean {
  const { times, timesPer } = active.rule;
  if (times === undefined) return false;
  const used = timesPer === 'document' ? (active.perDocument.get(documentId) ?? 0) : active.applied;
  return used >= times;
}
