import type { FaultRule } from '../shared/faults.js';
import type { InspectedOutage } from '../shared/outages.js';
import type { RequestRecord, RequestStatsSnapshot } from '../shared/request-stats.js';
import type { AuthorityRule } from './fixture-schema.js';
import type { DocumentRecord, PurchaseView, SaleView, StockMovement } from './model.js';

/** Shapes of the inspection API under /__sandbox, shared by its routes and SandboxInspector. */

export const INSPECTION_PREFIX = '/__sandbox';

/** A document as the sandbox keeps it, with the public view under `sale`. */
export type InspectedDocument = Omit<DocumentRecord, 'view'> & { sale: SaleView };

export type CallbackAttemptKind = 'scheduled' | 'duplicate' | 'out-of-order';

export interface CallbackAttempt {
  deliveryId: string;
  documentId: string;
  event: string;
  /** 1-based attempt number of the delivery (the `x-callback-attempt` header). */
  attempt: number;
  kind: CallbackAttemptKind;
  at: string;
  /** HTTP status of the receiver's answer; null when none came. */
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface InspectedAuthorityRule extends AuthorityRule {
  id: string;
  source: 'fixture' | 'runtime';
  /** Submissions the rule decided so far. */
  applied: number;
}

/** A supplier invoice as the sandbox keeps it: the listed view, whether a pull fetched it yet, its business. */
export interface InspectedPurchase {
  purchase: PurchaseView;
  businessId: string;
  visible: boolean;
}

export interface StockLevel {
  branchId: string;
  itemId: string;
  quantity: number;
}

/** What the sandbox recorded of one item: for tests and benchmarks that count duplicates. */
export interface InspectedItemRecord {
  id: string;
  externalId: string;
  registrationStatus: string;
  /** Items created through the API with this `externalId` (201s): more than 1 is a duplicate. */
  creations: number;
  /** Registrations sent to the authority for this item. */
  registrations: number;
}

export interface RequestsSummary extends RequestStatsSnapshot {
  faultsInjected: Record<string, number>;
}

export interface InspectionResponses {
  health: { status: 'ok' };
  documents: { documents: InspectedDocument[] };
  document: { document: InspectedDocument };
  movements: { movements: StockMovement[] };
  levels: { levels: StockLevel[] };
  purchases: { purchases: InspectedPurchase[] };
  purchase: InspectedPurchase;
  itemRecords: { items: InspectedItemRecord[] };
  callbacks: { attempts: CallbackAttempt[] };
  requests: RequestsSummary;
  requestLog: { requests: RequestRecord[] };
  faults: { faults: FaultRule[] };
  fault: { fault: FaultRule };
  rules: { rules: InspectedAuthorityRule[] };
  rule: { rule: InspectedAuthorityRule };
  outages: { outages: InspectedOutage[] };
  outage: { outage: InspectedOutage };
}
