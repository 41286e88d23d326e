import { describe, expect, it } from 'vitest';
import { invoiceReport, mappingsReport, progressBar, stockInReport } from '../../src/cli/stock-in-view.js';
import type { InvoiceStock, StockInState } from '../../src/contracts/stock-in.js';

function invoice(purchaseId: string, state: InvoiceStock['state'], changes: Partial<InvoiceStock> = {}): InvoiceStock {
  return {
    purchaseId,
    supplierPin: 'P051234567X',
    supplierName: 'Kabras Sugar',
    supplierInvoiceNumber: `INV-${purchaseId}`,
    invoiceDate: '2025-03-02',
    branch: null,
    status: 'confirmed',
    state,
    round: 1,
    lines: [],
    corrections: 0,
    updatedAt: '2025-03-02T10:00:00.000Z',
    ...changes,
  };
}

const line = { description: 'Sugar 50kg', code: null, hsCode: null, quantity: 10, unitPrice: 4500 };

const state: StockInState = {
  businessId: 'biz_1',
  settings: { from: '2025-01-01', allOrNothing: false },
  invoices: [
    invoice('pur_2', 'waiting', {
      invoiceDate: '2025-03-05',
      branch: '01',
      lines: [
        { line: 0, ...line, match: { itemId: 'itm_sugar', factor: 50, by: 'merchant' }, added: 500 },
        {
          line: 1,
          ...line,
          description: 'Delivery',
          code: 'DLV',
          quantity: 1,
          unitPrice: 300,
          added: 0,
          candidates: [{ itemId: 'itm_fee', name: 'Delivery fee' }],
        },
      ],
    }),
    invoice('pur_1', 'added', {
      lines: [{ line: 0, ...line, match: { itemId: 'itm_sugar', factor: 50, by: 'learned' }, added: 500 }],
    }),
    invoice('pur_3', 'before_start', { invoiceDate: '2024-12-30' }),
    invoice('pur_4', 'not_confirmed', { status: 'rejected' }),
  ],
  totals: {
    invoicesAdded: 1,
    linesAdded: 2,
    linesWaiting: 1,
    linesTakenBack: 0,
    matchedBy: { merchant: 1, learned: 1, name: 0, operator: 0 },
  },
};

describe('the stock-in in a terminal', () => {
  it('lists every invoice by date, then each waiting line with the items it may be and the command that maps it', () => {
    expect(stockInReport(state)).toEqual([
      'stock-in of biz_1 (from 2025-01-01): 4 invoice(s); lines 2 added, 1 waiting, 0 taken back; matched by ' +
        'merchant 1, learned 1, name 0, operator 0',
      '',
      'PURCHASE  STATE                  SUPPLIER                    NUMBER     DATE        BRANCH   ADDED  WAITING',
      'pur_3     before the start date  Kabras Sugar (P051234567X)  INV-pur_3  2024-12-30  (first)  0      0',
      'pur_1     added                  Kabras Sugar (P051234567X)  INV-pur_1  2025-03-02  (first)  1      0',
      'pur_4     not confirmed          Kabras Sugar (P051234567X)  INV-pur_4  2025-03-02  (first)  0      0',
      'pur_2     waiting for a mapping  Kabras Sugar (P051234567X)  INV-pur_2  2025-03-05  01       1      1',
      '',
      'Invoices settled over an hour ago are in their purchases books (docs/stock-in.md).',
      '',
      'Waiting for a mapping:',
      '  pur_2: INV-pur_2 of 2025-03-05 from Kabras Sugar (P051234567X)',
      '    line 1: "Delivery" (code DLV), 1 × 300',
      '      maybe: itm_fee (Delivery fee)',
      '',
      'Map a line: npm run purchases -- map line biz_1 <purchaseId> <line> (--item <itemId> [--factor N] | --not-stock)',
    ]);
  });

  it('counts the invoices settled among those confirmed', () => {
    expect(progressBar(state, 10)).toBe('[#######...] 2/3 invoices settled, 1 waiting');
    expect(progressBar({ ...state, invoices: [] }, 10)).toBe('[##########] 0/0 invoices settled, 0 waiting');
  });

  it('says when nothing is recent, and where the older invoices are', () => {
    expect(stockInReport({ ...state, settings: null, invoices: [] }).slice(1)).toEqual([
      'No supplier invoice settled in the last hour, and none waits for a person.',
      'Invoices settled over an hour ago are in their purchases books (docs/stock-in.md).',
    ]);
  });

  it('shows an invoice line by line, and the mappings as a table', () => {
    expect(invoiceReport(state.invoices[0]!)).toEqual([
      'pur_2: INV-pur_2 of 2025-03-05 from Kabras Sugar (P051234567X), branch 01: waiting for a mapping',
      '  LINE  DESCRIPTION  QUANTITY  ITEM                       ADDED',
      '  0     Sugar 50kg   10        itm_sugar × 50 (merchant)  500',
      '  1     Delivery     1         waiting                    0',
    ]);
    expect(
      mappingsReport([
        { supplierPin: 'P2', by: 'code', key: 'DLV', notStock: true, source: 'learned' },
        {
          supplierPin: 'P1',
          by: 'description',
          key: 'Sugar 50kg',
          itemId: 'itm_sugar',
          factor: 50,
          source: 'merchant',
        },
      ]),
    ).toEqual([
      'SUPPLIER  BY           KEY         ITEM         FACTOR  SOURCE',
      'P1        description  Sugar 50kg  itm_sugar    50      merchant',
      'P2        code         DLV         (not stock)          learned',
      '2 mapping(s)',
    ]);
  });
});
