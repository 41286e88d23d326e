import { describe, expect, it } from 'vitest';
import type { ApplicationVerdict, StockVerdict, Totals } from '../../tools/chaos/checker.js';
import type { IncomingVerdict } from '../../tools/chaos/incoming.js';
import { applicationLine, incomingMovementsText, incomingText, passed, resultLine } from '../../tools/chaos/report.js';

const clean: Totals = {
  sales: 60,
  duplicates: 0,
  lost: 0,
  stockErrors: 0,
  creditNoteErrors: 0,
  exactlyOnceViolations: 0,
  incomingMismatches: 0,
  applications: 3,
  overBudget: 0,
  busiestRatio: 0.123,
  rateLimited: 0,
  requestsMissed: 0,
};

/** The exactly-once rule held: 120 lines in 110 movements, 5 of them merged. */
const exact: StockVerdict = {
  lines: 120,
  quantity: 240,
  movements: 110,
  merged: 5,
  probes: 3,
  withoutReference: 0,
  duplicates: [],
  items: [],
  missingQuantity: 0,
  extraQuantity: 0,
  violations: 0,
  ok: true,
};

const item = {
  businessId: 'b',
  branchId: 'br',
  itemId: 'i',
  soldLines: 2,
  sold: 4,
  deducted: 4,
  deductMovements: 1,
  restockedLines: 0,
  restocked: 0,
  added: 0,
  addMovements: 0,
  net: false,
  incomingLines: 0,
  incoming: 0,
  probes: 0,
  missing: { deduct: 0, add: 0, net: 0 },
  extra: { deduct: 0, add: 0, net: 0 },
};

describe('the chaos result line', () => {
  it('is one line with the totals, and passes only with nothing wrong, every budget kept and everything settled', () => {
    expect(resultLine({ totals: clean, stock: exact }, 7, 12.34, 300)).toBe(
      'chaos: 60 sales over 3 applications, 0 duplicate documents, 0 lost, 0 stock errors, 0 credit-note errors, ' +
        'every line in exactly one recorded movement (120 lines, 110 movements, 5 merged), 0 over budget (busiest window 0.12 of a limit), ' +
        '7 operator actions, settled in 12.3 s',
    );
    expect(resultLine({ totals: clean, stock: exact }, 7, 12.34, 300)).not.toContain('\n');
    expect(passed(clean, 12.34)).toBe(true);
    expect(passed(clean, null)).toBe(false);
    expect(resultLine({ totals: clean, stock: exact }, 1, null, 300)).toMatch(
      /, 1 operator action, not settled within 300 s$/,
    );
    for (const wrong of [
      'duplicates',
      'lost',
      'stockErrors',
      'creditNoteErrors',
      'exactlyOnceViolations',
      'incomingMismatches',
      'overBudget',
      'requestsMissed',
    ] as const) {
      expect(passed({ ...clean, [wrong]: 1 }, 1)).toBe(false);
    }
    // The sandbox's own 429s are reported per application, not failed on.
    expect(passed({ ...clean, rateLimited: 3 }, 1)).toBe(true);
    expect(resultLine({ totals: { ...clean, requestsMissed: 4 }, stock: exact }, 0, 1, 300)).toContain(
      ', 4 requests unread (budgets not checked whole), ',
    );
  });

  it('says what came in from supplier invoices, and leaves it out of a run without any', () => {
    const incoming: IncomingVerdict = {
      invoices: 12,
      counted: 6,
      lines: 20,
      expectedQuantity: 105,
      recordedQuantity: 105,
      movements: { add: 14, deduct: 3 },
      mismatches: 0,
      notInSandbox: [],
      ok: true,
    };
    const text =
      'incoming stock: 12 supplier invoices (6 confirmed from the start date, 20 lines), 105 units expected, ' +
      '105 recorded, 0 net mismatches';
    expect(incomingText(incoming)).toBe(text);
    expect(incomingMovementsText(incoming)).toBe('14 stock-in lines added and 3 taken back alone in a movement');
    expect(resultLine({ totals: clean, stock: exact, incoming }, 0, 1, 300)).toContain(
      `(120 lines, 110 movements, 5 merged), ${text}, 0 over budget`,
    );
    expect(resultLine({ totals: clean, stock: exact, incoming: { ...incoming, invoices: 0 } }, 0, 1, 300)).toBe(
      resultLine({ totals: clean, stock: exact }, 0, 1, 300),
    );
    expect(incomingText({ ...incoming, recordedQuantity: 98, mismatches: 1, notInSandbox: ['pur_x'], ok: false })).toBe(
      'incoming stock: 12 supplier invoices (6 confirmed from the start date, 20 lines), 105 units expected, ' +
        '98 recorded, 1 net mismatch, 1 invoice(s) not in the sandbox',
    );
  });

  it('says how many exactly-once violations there are and of which kind', () => {
    const broken: StockVerdict = {
      ...exact,
      duplicates: [{ businessId: 'b', referenceId: 'stk:x:1', recorded: 2 }],
      // One item short by 2 on deductions, another 1 over on restocks.
      items: [
        { ...item, deducted: 2 },
        {
          ...item,
          itemId: 'j',
          sold: 0,
          soldLines: 0,
          deducted: 0,
          restocked: 1,
          restockedLines: 1,
          added: 2,
          addMovements: 2,
        },
      ],
      missingQuantity: 2,
      extraQuantity: 1,
      violations: 3,
      ok: false,
    };
    expect(resultLine({ totals: { ...clean, exactlyOnceViolations: 3 }, stock: broken }, 0, 1, 300)).toContain(
      ', 3 exactly-once violations (1 referenceId record(s) repeated, 2 item balance(s) off (2 missing, 1 extra); 120 lines, 110 movements), ',
    );
  });

  it('says per application its sales, signed, duplicates, lost, its busiest window against its limit and its 429s', () => {
    const application: ApplicationVerdict = {
      applicationId: 'app_demo_other',
      name: 'lakeside',
      businesses: ['biz_other_kisumu'],
      sales: 15,
      signed: 15,
      duplicates: 0,
      lost: 0,
      stockErrors: 0,
      creditNoteErrors: 0,
      exactlyOnceViolations: 0,
      budget: {
        limit: 1500,
        windowMs: 60_000,
        requests: 140,
        rateLimited: 2,
        busiestWindow: { requests: 120, startedAt: null },
        ratio: 0.08,
        over: false,
      },
    };
    expect(applicationLine(application)).toBe(
      '[chaos] lakeside (app_demo_other, 1 business): 15 sales, 15 signed, 0 duplicates, 0 lost, 0 stock errors, 0 credit-note errors, 0 exactly-once violations; ' +
        'at most 120 requests in 60 s of 1500 allowed (0.08), 140 requests, 2 refused 429',
    );
    expect(
      applicationLine({
        ...application,
        budget: {
          ...application.budget,
          busiestWindow: { requests: 1501, startedAt: null },
          ratio: 1.0007,
          over: true,
        },
      }),
    ).toContain('(1.00) OVER BUDGET');
  });
});
