/**
 * The demo's day's close: the Nairobi business's day, as its control unit's book counted the demo's sales and credit
 * note, checked against the sandbox's own documents, closed at once (the demo does not wait for midnight), its table
 * printed and its close found in the sink; then a till close with one deliberate difference, a sale the till made that
 * never reached the worker, answered naming it.
 */
import { readFile } from 'node:fs/promises';
import { FiscalDaysClient } from '../../src/client/fiscal-days.js';
import { dayText } from '../../src/cli/fiscal-day-table.js';
import { addBands, isoDateOf, taxBandsOf, type FiscalDayEvent, type TaxBands } from '../../src/contracts/fiscal-day.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import type { PieceOutcome } from './demo-system.js';
import type { Stack } from './stack.js';

export async function demoFiscalDay(stack: Stack, runId: string, sinkPath: string): Promise<PieceOutcome> {
  const businessId = DEMO.businesses.nairobi;
  const signed = ((await stack.sandbox?.inspector.documents({ businessId })) ?? []).filter(
    (d) => d.sale.traderInvoiceNumber.includes(runId) && d.sale.receipt?.scuId,
  );
  const receipt = signed[0]?.sale.receipt;
  if (!receipt) return { ok: false, note: 'the sandbox holds no signed document of this demo' };
  const day = { businessId, scuId: receipt.scuId!, date: isoDateOf(receipt.scuDate)! };
  const ours = signed.filter(
    (d) => d.sale.receipt!.scuId === day.scuId && isoDateOf(d.sale.receipt!.scuDate) === day.date,
  );
  const expected: TaxBands = {};
  for (const d of ours) addBands(expected, taxBandsOf(d.sale.lines));

  const days = new FiscalDaysClient(stack.client);
  const closed = await days.close(day);
  const [book] = await days.days(businessId, { scuId: day.scuId, date: day.date });
  console.log(`\n${dayText(book ? [book] : [])}`);
  const counted = Object.values(closed.receipts).reduce((a, b) => a + b, 0);
  const exact = counted === ours.length && JSON.stringify(sorted(closed.taxes)) === JSON.stringify(sorted(expected));
  const delivered = await closeDelivered(sinkPath, businessId, day.scuId);

  // The till's own Z report: the book's figures, and one invoice number that never reached the worker.
  const neverStarted = `TILL-ONLY-${runId}`;
  const till = {
    ...day,
    receipts: closed.receipts,
    taxes: Object.fromEntries(
      Object.entries(closed.taxes).map(([l, b]) => [
        l,
        { taxable: b.taxable / 100, tax: b.tax / 100, total: b.total / 100 },
      ]),
    ),
    invoiceNumbers: [
      ...ours.filter((d) => d.sale.type === 'sale').map((d) => d.sale.traderInvoiceNumber),
      neverStarted,
    ],
  };
  const match = await days.matchTillClose(till);
  const named = match.notSigned.map((n) => `${n.traderInvoiceNumber} (${n.state})`).join(', ');
  const answered =
    !match.matched && match.notSignedCount === 1 && match.notSigned[0]?.traderInvoiceNumber === neverStarted;
  return {
    ok: exact && delivered && answered && match.receipts.length === 0 && match.taxes.length === 0,
    note:
      `${day.scuId} ${day.date}: ${counted} receipts counted (${ours.length} signed at the sandbox), totals ` +
      `${exact ? 'exact' : 'DIFFER'}, close ${delivered ? 'delivered' : 'NOT delivered'}; till close: ${named || 'no difference named'}`,
  };
}

function sorted(taxes: TaxBands): Array<[string, TaxBands[string]]> {
  return Object.entries(taxes).sort(([a], [b]) => a.localeCompare(b));
}

async function closeDelivered(sinkPath: string, businessId: string, scuId: string): Promise<boolean> {
  for (let tries = 0; tries < 100; tries++) {
    const events = (await readFile(sinkPath, 'utf8').catch(() => ''))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Partial<FiscalDayEvent>);
    if (events.some((e) => e.type === 'fiscal_day.closed' && e.businessId === businessId && e.day?.scuId === scuId))
      return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
