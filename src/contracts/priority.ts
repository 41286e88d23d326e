/** Priority keys, lower first, on the compliance queue and the workflow queue (a sale is started with `signing`). */
export const PRIORITY = {
  /** Sales and credit notes: a customer is waiting at the till. */
  signing: 1,
  /** Reading an outcome the authority has not given yet. */
  polling: 2,
  /** Catalogue and stock calls; a ledger's movements of goods that came in stay here even past their max delay. */
  bookkeeping: 3,
  /** The scheduled supplier-invoice sync: catching up can wait for any till. */
  purchases: 4,
  /** Work nobody waits for (the scheduled reconciliation, catalogue imports): only what the others leave. */
  background: 5,
} as const;
