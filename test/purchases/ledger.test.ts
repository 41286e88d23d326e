import { describe, expect, it } from 'vitest';
import type { ListedPurchase, PurchaseLedger } from '../../src/contracts/purchases-sync.js';
import { diffPage, previousLedger, recordDelivered } from '../../workflows/purchases-sync/ledger.js';

function listed(id: string, status: string, fingerprint: string): ListedPurchase {
  return {
    fingerprint,
    purchase: {
      id,
      status,
      supplier: { name: 'S', pin: 'P1' },
      supplierInvoiceNumber: 'INV-1',
      invoiceDate: '2025-06-01',
      branch: null,
      totals: { subtotal: 1, vat: 0, total: 1 },
      lines: [],
      confirmationError: null,
    },
  };
}

describe('the sync ledger', () => {
  it('is due a received event for an unknown invoice, a change for a new fingerprint, nothing for the same', () => {
    const previous: PurchaseLedger = {
      pur_b: ['fb', 0, 'pulled'],
      pur_c: ['fc', 2, 'confirmed'],
      pur_gone: ['fg', 0, 'pulled'],
    };
    const ledger: PurchaseLedger = {};
    const diff = diffPage(
      'biz',
      [listed('pur_a', 'pulled', 'fa'), listed('pur_b', 'confirmed', 'fb2'), listed('pur_c', 'confirmed', 'fc')],
      previous,
      ledger,
    );
    expect(diff).toMatchObject({ seen: 3, newInvoices: 1, statusChanges: 1 });
    expect(diff.due.map((d) => [d.event.id, d.event.type, d.event.previousStatus])).toEqual([
      ['purchase.pur_a.v0.fa', 'purchase.received', undefined],
      ['purchase.pur_b.v1.fb2', 'purchase.status_changed', 'pulled'],
    ]);
    // Until delivered, the ledger keeps what was delivered before (and nothing for a new invoice).
    expect(ledger).toEqual({ pur_b: ['fb', 0, 'pulled'], pur_c: ['fc', 2, 'confirmed'] });
    expect(previous).toEqual({ pur_gone: ['fg', 0, 'pulled'] });

    recordDelivered(ledger, diff.due, 1);
    expect(ledger).toEqual({ pur_a: ['fa', 0, 'pulled'], pur_b: ['fb', 0, 'pulled'], pur_c: ['fc', 2, 'confirmed'] });
    // The undelivered change is due again, under the same id, in the next sync.
    const next = diffPage('biz', [listed('pur_b', 'confirmed', 'fb2')], { ...ledger }, {});
    expect(next.due.map((d) => d.event.id)).toEqual(['purchase.pur_b.v1.fb2']);
  });

  it('takes the ledger only from a previous result of the same business, keeping well-formed entries', () => {
    const ledger = { pur_a: ['fa', 0, 'pulled'], bad: ['x', -1, 'pulled'], worse: 'nope' };
    expect(previousLedger({ businessId: 'biz', ledger, counts: {} }, 'biz')).toEqual({ pur_a: ['fa', 0, 'pulled'] });
    expect(previousLedger({ businessId: 'other', ledger }, 'biz')).toEqual({});
    expect(previousLedger(undefined, 'biz')).toEqual({});
    expect(previousLedger('text', 'biz')).toEqual({});
  });
});
