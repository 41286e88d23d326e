/** Which application's client, gate and budget a call for a business goes through; activities build no client. */
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import type { BudgetPlacement } from '../contracts/budget-placement.js';

export interface ServiceAccess {
  compliance(businessId: string): ComplianceClient;
  /** Without a company, the one configured application's (a sync batch it owns). */
  accounting(companyId?: string): AccountingClient;
  /** `newWork` refuses a business no application serves now; else a drained one goes with the application draining. */
  place(businessId: string, options: { newWork: boolean }): BudgetPlacement;
}
