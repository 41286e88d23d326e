import { describe, expect, it } from 'vitest';
import { saleDetails, saleSummary } from '../../src/client/index.js';
import type { SaleInput } from '../../src/client/index.js';

function sale(overrides: Partial<SaleInput> = {}): SaleInput {
  return {
    businessId: 'biz_demo_nairobi',
    traderInvoiceNumber: 'INV-1',
    saleDate: '2025-01-15',
    lines: [
      { itemId: 'SUGAR', quantity: 3, unitPrice: 1.005, description: 'Sugar | 1 kg\nbag' },
      { itemId: 'MILK', quantity: 1000, unitPrice: 1234.5 },
    ],
    ...overrides,
  };
}

describe('saleSummary', () => {
  it('gives business, invoice, line count and total on one line, rounding each line to the cent', () => {
    // 3 × 1.005 = 3.015 → 3.02; 1000 × 1234.50 = 1,234,500.00
    expect(saleSummary(sale())).toBe('Sale INV-1 · business biz_demo_nairobi · 2 lines · total KES 1,234,503.02');
  });

  it('stays within the 200 bytes Temporal allows, even for long multi-byte ids', () => {
    const summary = saleSummary(sale({ businessId: 'é'.repeat(300) }));
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(200);
    expect(summary.endsWith('…')).toBe(true);
    expect(summary).not.toContain('\uFFFD');
  });
});

describe('saleDetails', () => {
  it('lists the lines in a markdown table, escaping what would break it, without contact details', () => {
    const details = saleDetails(
      sale({
        branchId: '00',
        customer: { name: 'Wanjiku', pin: 'A123', phone: '+254700000000', email: 'w@example.co.ke' },
      }),
    );
    expect(details).toContain(
      '**Sale** INV-1 of **biz_demo_nairobi**, dated 2025-01-15, branch 00, customer Wanjiku, customer PIN A123',
    );
    expect(details).toContain('| 1 | SUGAR | Sugar \\| 1 kg bag | 3 | 1.005 | 3.02 |');
    expect(details).toContain('| 2 | MILK |  | 1000 | 1,234.50 | 1,234,500.00 |');
    expect(details).toContain('**Total** KES 1,234,503.02');
    expect(details).not.toContain('+254700000000');
    expect(details).not.toContain('w@example.co.ke');
  });

  it('shows as many of 500 lines as fit in 20 000 bytes and says how many are left out', () => {
    const lines = Array.from({ length: 500 }, (_, i) => ({
      itemId: `ITEM-${i}`,
      quantity: 1,
      unitPrice: 1,
      description: 'ü'.repeat(200),
    }));
    const details = saleDetails(sale({ lines }));
    expect(Buffer.byteLength(details)).toBeLessThanOrEqual(20_000);
    const shown = details.split('\n').filter((l) => /^\| \d+ \|/.test(l)).length;
    expect(shown).toBeGreaterThan(50);
    expect(details).toContain(`… and ${500 - shown} more line(s), not shown here (see the workflow input).`);
    expect(details).toContain('**Total** KES 500.00');
  });
});
