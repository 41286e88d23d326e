import { fetch } from 'undici';
import type {
  AuthorityRuleInput,
  ItemNeedsRule,
  ItemNeedsRuleInput,
  PurchaseFixtureInput,
  PurchaseStatus,
} from './compliance/fixture-schema.js';
import {
  INSPECTION_PREFIX,
  type CallbackAttempt,
  type InspectedAuthorityRule,
  type InspectedDocument,
  type InspectedItemRecord,
  type InspectedPurchase,
  type InspectionResponses,
  type RequestsSummary,
  type StockLevel,
} from './compliance/inspection-types.js';
import type { ItemView, StockMovement } from './compliance/model.js';
import type { FaultRule, FaultRuleInput } from './shared/faults.js';
import type { InspectedOutage, OutageInput } from './shared/outages.js';
import type { RequestRecord } from './shared/request-stats.js';

export type {
  CallbackAttempt,
  InspectedAuthorityRule,
  InspectedDocument,
  InspectedPurchase,
  RequestsSummary,
  StockLevel,
};

/** An inspection call the sandbox refused; `code` is the compliance error code. */
export class InspectionError extends Error {
  override readonly name = 'InspectionError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Query = Record<string, string | number | undefined>;

/**
 * A typed client of the sandbox's inspection API (/__sandbox on the compliance port): what tests and
 * demos use to see the effect of calls and to steer the simulated authority and the faults.
 */
export class SandboxInspector {
  constructor(
    readonly complianceUrl: string,
    /** When given, reset() resets the accounting sandbox too. */
    readonly accountingUrl?: string,
  ) {}

  health(): Promise<InspectionResponses['health']> {
    return this.call('GET', '/health');
  }

  async documents(
    filter: { businessId?: string; traderInvoiceNumber?: string; type?: 'sale' | 'credit_note' } = {},
  ): Promise<InspectedDocument[]> {
    return (await this.call<InspectionResponses['documents']>('GET', '/documents', filter)).documents;
  }

  async document(id: string): Promise<InspectedDocument> {
    return (await this.call<InspectionResponses['document']>('GET', `/documents/${encodeURIComponent(id)}`)).document;
  }

  /** Settles an in-flight document now, as the authority would. */
  async settle(
    id: string,
    outcome: 'completed' | 'failed',
    options: { errorCode?: string; message?: string } = {},
  ): Promise<InspectedDocument> {
    const body = { outcome, ...options };
    return (
      await this.call<InspectionResponses['document']>('POST', `/documents/${encodeURIComponent(id)}/settle`, {}, body)
    ).document;
  }

  async cancel(id: string): Promise<InspectedDocument> {
    return (
      await this.call<InspectionResponses['document']>('POST', `/documents/${encodeURIComponent(id)}/cancel`, {}, {})
    ).document;
  }

  /** Movements in the order they were recorded; `referencePrefix` keeps those whose reference starts with it. */
  async stockMovements(
    filter: {
      businessId?: string;
      branchId?: string;
      itemId?: string;
      referenceId?: string;
      referencePrefix?: string;
    } = {},
  ): Promise<StockMovement[]> {
    return (await this.call<InspectionResponses['movements']>('GET', '/stock/movements', filter)).movements;
  }

  async stockLevels(businessId: string): Promise<StockLevel[]> {
    return (await this.call<InspectionResponses['levels']>('GET', '/stock/levels', { businessId })).levels;
  }

  /** Of a stock-tracked item of the business; anything else throws, so a typo is not read as an empty shelf. */
  async quantityOnHand(businessId: string, branchId: string, itemId: string): Promise<number> {
    const level = (await this.stockLevels(businessId)).find((l) => l.branchId === branchId && l.itemId === itemId);
    if (!level) {
      throw new Error(`no stock level of item ${itemId} at branch ${branchId} of ${businessId} (not stock tracked?)`);
    }
    return level.quantity;
  }

  /** Polls the quantity on hand until `done` holds (e.g. a stock-in added its lines); throws after `timeoutMs`. */
  async waitForQuantityOnHand(
    businessId: string,
    branchId: string,
    itemId: string,
    done: (quantity: number) => boolean,
    timeoutMs = 5_000,
  ): Promise<number> {
    const what = `the quantity of ${itemId} at ${branchId}`;
    return this.poll(() => this.quantityOnHand(businessId, branchId, itemId), done, timeoutMs, what);
  }

  /** Every supplier invoice, those no pull has fetched yet included (`visible: false`). */
  async purchases(businessId?: string): Promise<InspectedPurchase[]> {
    return (await this.call<InspectionResponses['purchases']>('GET', '/purchases', { businessId })).purchases;
  }

  /** The tax authority receives an invoice: the business's next pull fetches it (its `arrivesAtPull` one, if set). */
  addPurchase(businessId: string, purchase: PurchaseFixtureInput): Promise<InspectedPurchase> {
    return this.call('POST', '/purchases', {}, { businessId, purchase });
  }

  /**
   * Reviews an invoice as the dashboard would, at once (no pull needed): confirm it, or take a confirmation back
   * to `pending_review` or `rejected`. The list shows the new status to the next read.
   */
  reviewPurchase(
    id: string,
    status: PurchaseStatus,
    confirmationError: string | null = null,
  ): Promise<InspectedPurchase> {
    return this.call('POST', `/purchases/${encodeURIComponent(id)}/review`, {}, { status, confirmationError });
  }

  async callbackAttempts(documentId?: string): Promise<CallbackAttempt[]> {
    return (await this.call<InspectionResponses['callbacks']>('GET', '/callbacks', { documentId })).attempts;
  }

  requests(): Promise<RequestsSummary> {
    return this.call('GET', '/requests');
  }

  async requestLog(
    filter: { since?: number; applicationId?: string; service?: 'compliance' | 'accounting' } = {},
  ): Promise<RequestRecord[]> {
    return (await this.call<InspectionResponses['requestLog']>('GET', '/requests/log', filter)).requests;
  }

  /** Every item of the business with how many times it was created and registered through the API. */
  async itemRecords(businessId: string): Promise<InspectedItemRecord[]> {
    return (await this.call<InspectionResponses['itemRecords']>('GET', '/items/records', { businessId })).items;
  }

  /** Items created from now on whose externalId matches lack these parts, whatever their codes. */
  async addItemNeedsRule(rule: ItemNeedsRuleInput): Promise<ItemNeedsRule> {
    return (await this.call<{ rule: ItemNeedsRule }>('POST', '/authority/item-needs', {}, rule)).rule;
  }

  /** Removes the item-needs rules added at run time; the fixture's stay. */
  async clearItemNeedsRules(): Promise<void> {
    await this.call('DELETE', '/authority/item-needs');
  }

  /** Fills in what the item lacks for registration, as if done on the dashboard. */
  async fixItem(id: string): Promise<ItemView> {
    return (await this.call<{ item: ItemView }>('POST', `/items/${encodeURIComponent(id)}/fix`, {}, {})).item;
  }

  async faults(): Promise<FaultRule[]> {
    return (await this.call<InspectionResponses['faults']>('GET', '/faults')).faults;
  }

  async addFault(rule: FaultRuleInput): Promise<FaultRule> {
    return (await this.call<InspectionResponses['fault']>('POST', '/faults', {}, rule)).fault;
  }

  async removeFault(id: string): Promise<void> {
    await this.call('DELETE', `/faults/${encodeURIComponent(id)}`);
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/faults');
  }

  async authorityRules(): Promise<InspectedAuthorityRule[]> {
    return (await this.call<InspectionResponses['rules']>('GET', '/authority/rules')).rules;
  }

  /** Adds a rule that takes precedence over the fixture's. */
  async addAuthorityRule(rule: AuthorityRuleInput): Promise<InspectedAuthorityRule> {
    return (await this.call<InspectionResponses['rule']>('POST', '/authority/rules', {}, rule)).rule;
  }

  async removeAuthorityRule(id: string): Promise<void> {
    await this.call('DELETE', `/authority/rules/${encodeURIComponent(id)}`);
  }

  /** Removes the rules added at run time. */
  async clearAuthorityRules(): Promise<void> {
    await this.call('DELETE', '/authority/rules');
  }

  /** Outages of both services and of the tax authority, each with whether it is active now. */
  async outages(): Promise<InspectedOutage[]> {
    return (await this.call<InspectionResponses['outages']>('GET', '/outages')).outages;
  }

  /** Adds an outage (a service outage without `service` is the compliance service's). */
  async addOutage(outage: OutageInput): Promise<InspectedOutage> {
    return (await this.call<InspectionResponses['outage']>('POST', '/outages', {}, outage)).outage;
  }

  /** Ends and removes an outage. */
  async removeOutage(id: string): Promise<void> {
    await this.call('DELETE', `/outages/${encodeURIComponent(id)}`);
  }

  /** Ends and removes every outage, the fixture's too (a reset brings those back). */
  async clearOutages(): Promise<void> {
    await this.call('DELETE', '/outages');
  }

  /** Where the accounting sandbox sends an application's signed webhooks (null: nowhere). */
  async setAccountingWebhookEndpoint(applicationId: string, url: string | null): Promise<void> {
    if (!this.accountingUrl) throw new Error('this inspector has no accounting sandbox URL');
    await this.call('PUT', `/webhook-endpoints/${encodeURIComponent(applicationId)}`, {}, { url }, this.accountingUrl);
  }

  /** Puts the sandbox back to its fixture: data, counters, windows, keys, faults, rules and outages. */
  async reset(): Promise<void> {
    await this.call('POST', '/reset', {}, {});
    if (this.accountingUrl) await this.call('POST', '/reset', {}, {}, this.accountingUrl);
  }

  /** Polls a document until `done` holds (e.g. an async sale settled); throws after `timeoutMs`. */
  async waitForDocument(
    id: string,
    done: (doc: InspectedDocument) => boolean,
    timeoutMs = 5_000,
  ): Promise<InspectedDocument> {
    return this.poll(() => this.document(id), done, timeoutMs, `document ${id}`);
  }

  /** Polls the callback attempts of a document until `done` holds; throws after `timeoutMs`. */
  async waitForCallbackAttempts(
    documentId: string,
    done: (attempts: CallbackAttempt[]) => boolean,
    timeoutMs = 5_000,
  ): Promise<CallbackAttempt[]> {
    return this.poll(() => this.callbackAttempts(documentId), done, timeoutMs, `callback attempts of ${documentId}`);
  }

  private async poll<T>(
    read: () => Promise<T>,
    done: (value: T) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  private async call<T>(
    method: string,
    path: string,
    query: Query = {},
    body?: unknown,
    baseUrl = this.complianceUrl,
  ): Promise<T> {
    const url = new URL(`${INSPECTION_PREFIX}${path}`, baseUrl);
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const response = await fetch(url, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const json: unknown = text === '' ? undefined : JSON.parse(text);
    if (!response.ok) {
      const error = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
      const reason = error?.message ?? `HTTP ${response.status}`;
      throw new InspectionError(
        response.status,
        error?.code ?? `http_${response.status}`,
        `${method} ${url.pathname}: ${reason}`,
      );
    }
    return json as T;
  }
}
