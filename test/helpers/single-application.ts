/** A ServiceAccess of one application per service, for tests that give activities their clients directly. */
import type { AccountingClient } from '../../src/accounting/client.js';
import type { ComplianceClient } from '../../src/compliance/client.js';
import type { ServiceAccess } from '../../src/services/access.js';
import { SINGLE_KEY_APPLICATION } from '../../src/contracts/budget-placement.js';

/** One application per service: every business and company is reached with the same key. */
export function singleApplication(clients: {
  compliance?: ComplianceClient;
  accounting?: AccountingClient;
}): ServiceAccess {
  const compliance = () => {
    if (clients.compliance === undefined) throw new Error('no compliance service was given to these activities');
    return clients.compliance;
  };
  const accounting = () => {
    if (clients.accounting === undefined) throw new Error('no accounting service was given to these activities');
    return clients.accounting;
  };
  return {
    compliance,
    accounting,
    // One application is the whole queue's budget (its server-side rate limit): its businesses share it fairly.
    place: (businessId) => ({ application: SINGLE_KEY_APPLICATION, fairnessKey: businessId }),
  };
}
