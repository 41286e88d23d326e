/** The item-registration process's contract: one workflow per business and item, awaited by its sales (waiters). */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const ITEM_REGISTRATION_WORKFLOW_TYPE = 'itemRegistrationWorkflow';

export function itemRegistrationWorkflowId(businessId: string, itemId: string): string {
  return `item-registration:${businessId}:${itemId}`;
}

export interface ItemRegistrationInput {
  businessId: string;
  itemId: string;
  branchId?: string;
  /** How long to wait for an operator to fix an item that still needs something (default '7 days'). */
  fixDeadline?: string;
}

export interface ItemRegistrationOutcome {
  itemId: string;
  /** `needs_fixing` is not final: the item waits for an operator, and `registered` or `failed` follows. */
  status: 'registered' | 'needs_fixing' | 'failed';
  needs?: { productType: boolean; classificationMapping: boolean };
  reason?: string;
}

export interface ItemRegistrationState {
  itemId: string;
  status: 'registering' | 'needs_fixing' | 'registered' | 'failed';
  needs: { productType: boolean; classificationMapping: boolean } | null;
  waiters: string[];
  /** Registrations asked of the service so far: a caller that said the item was fixed sees it heard when this moves. */
  attempts?: number;
}

/** A sale asks to be told when the item's registration settles (sent with signal-with-start). */
export const addRegistrationWaiterSignal = defineSignal<[{ workflowId: string }]>('addWaiter');
export const itemFixedSignal = defineSignal<[]>('itemFixed');
export const getItemRegistrationStateQuery = defineQuery<ItemRegistrationState>('getState');
