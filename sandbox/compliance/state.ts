import { createHash } from 'node:crypto';
import {
  DEFAULT_TAX_CATEGORY,
  type ApplicationFixture,
  type BusinessFixture,
  type ComplianceFixture,
  type ItemFixture,
  type PurchaseFixture,
  type Scope,
} from './fixture-schema.js';
import type { DocumentRecord, ItemNeeds, ItemRecord, ItemView, PurchaseRecord, StockMovement } from './model.js';
import { formatScuId } from './receipts.js';
import { roundHalfUp } from './tax.js';

export interface KeyRecord {
  id: string;
  key: string;
  applicationId: string;
  scopes: ReadonlySet<Scope>;
  /** Null for an organisation-wide key. */
  businessId: string | null;
  revoked: boolean;
  /** Epoch ms, or null when the key never expires. */
  expiresAt: number | null;
  environment: 'test' | 'live';
}

export interface BranchRecord {
  id: string;
  name: string;
  authorityBhfId: string;
  scuId: string;
}

export interface BusinessRecord {
  id: string;
  name: string;
  pin: string;
  environment: 'sandbox' | 'production';
  applicationId: string;
  branches: BranchRecord[];
}

const FIRST_SCU_SERIAL = 100_000_001;

/** Everything the compliance sandbox knows, built from the fixture and put back by `reset()`. */
export class ComplianceState {
  readonly applications = new Map<string, ApplicationFixture>();
  readonly keys = new Map<string, KeyRecord>();
  readonly businesses = new Map<string, BusinessRecord>();
  readonly items = new Map<string, ItemRecord>();
  /** Items by business and `externalId`, and how many times each `externalId` was created (201) through the API. */
  private readonly externalIds = new Map<string, string>();
  private readonly creations = new Map<string, number>();
  readonly documents = new Map<string, DocumentRecord>();
  readonly movements: StockMovement[] = [];
  readonly purchases: PurchaseRecord[] = [];
  private readonly stock = new Map<string, number>();
  private readonly receiptNumbers = new Map<string, number>();
  private readonly receiptTotals = new Map<string, number>();

  constructor(private readonly fixture: ComplianceFixture) {
    this.reset();
  }

  reset(): void {
    for (const collection of [this.applications, this.keys, this.businesses, this.items, this.documents, this.stock]) {
      collection.clear();
    }
    this.receiptNumbers.clear();
    this.receiptTotals.clear();
    this.externalIds.clear();
    this.creations.clear();
    this.movements.length = 0;
    this.purchases.length = 0;

    for (const application of this.fixture.applications) this.applications.set(application.id, { ...application });
    for (const key of this.fixture.apiKeys) {
      this.keys.set(key.key, {
        id: key.id ?? `key_${createHash('sha256').update(key.key).digest('hex').slice(0, 16)}`,
        key: key.key,
        applicationId: key.applicationId,
        scopes: new Set(key.scopes),
        businessId: key.businessId ?? null,
        revoked: key.revoked,
        expiresAt: key.expiresAt === undefined ? null : Date.parse(key.expiresAt),
        environment: key.key.startsWith('cmp_sk_live_') ? 'live' : 'test',
      });
    }
    let nextSerial = FIRST_SCU_SERIAL;
    for (const business of this.fixture.businesses) {
      this.businesses.set(business.id, {
        id: business.id,
        name: business.name,
        pin: business.pin,
        environment: business.environment,
        applicationId: business.applicationId,
        branches: business.branches.map((branch) => ({
          id: branch.id,
          name: branch.name,
          authorityBhfId: branch.authorityBhfId,
          scuId: formatScuId(branch.scuSerial ?? nextSerial++),
        })),
      });
      for (const item of business.items) this.addItem(itemRecord(business.id, item));
      for (const level of business.stock) this.stock.set(stockKey(level.branchId, level.itemId), level.quantity);
      for (const purchase of business.purchases) this.purchases.push(purchaseRecord(business, purchase));
    }
  }

  addItem(item: ItemRecord): void {
    this.items.set(item.view.id, item);
    this.externalIds.set(externalIdKey(item.businessId, item.view.externalId), item.view.id);
  }

  /** The business's item with this `externalId`, unless deleted. */
  itemByExternalId(businessId: string, externalId: string): ItemRecord | undefined {
    const item = this.items.get(this.externalIds.get(externalIdKey(businessId, externalId)) ?? '');
    return item && !item.deleted ? item : undefined;
  }

  /** An item created through the API: counted per `externalId`, so a test can see an item created twice. */
  createItem(item: ItemRecord): void {
    this.addItem(item);
    const key = externalIdKey(item.businessId, item.view.externalId);
    this.creations.set(key, (this.creations.get(key) ?? 0) + 1);
  }

  creationsOf(businessId: string, externalId: string): number {
    return this.creations.get(externalIdKey(businessId, externalId)) ?? 0;
  }

  itemsOf(businessId: string): ItemRecord[] {
    return [...this.items.values()].filter((item) => item.businessId === businessId && !item.deleted);
  }

  quantityOnHand(branchId: string, itemId: string): number {
    return this.stock.get(stockKey(branchId, itemId)) ?? 0;
  }

  setQuantityOnHand(branchId: string, itemId: string, quantity: number): void {
    this.stock.set(stockKey(branchId, itemId), quantity);
  }

  stockLevels(businessId: string): Array<{ branchId: string; itemId: string; quantity: number }> {
    const business = this.businesses.get(businessId);
    if (!business) return [];
    return business.branches.flatMap((branch) =>
      this.itemsOf(businessId)
        .filter((item) => item.view.stockTracked)
        .map((item) => ({
          branchId: branch.id,
          itemId: item.view.id,
          quantity: this.quantityOnHand(branch.id, item.view.id),
        })),
    );
  }

  /**
   * Counters for the next receipt: the receipt number counts the branch's receipts (so `cuInvoiceNo`,
   * which is `{scuId}/{receiptNumber}`, is unique per control unit), the total counter the business's.
   */
  nextReceiptCounters(
    business: BusinessRecord,
    branch: BranchRecord,
  ): { receiptNumber: number; totalReceiptCounter: number } {
    const receiptNumber = (this.receiptNumbers.get(branch.id) ?? 0) + 1;
    const totalReceiptCounter = (this.receiptTotals.get(business.id) ?? 0) + 1;
    this.receiptNumbers.set(branch.id, receiptNumber);
    this.receiptTotals.set(business.id, totalReceiptCounter);
    return { receiptNumber, totalReceiptCounter };
  }
}

function stockKey(branchId: string, itemId: string): string {
  return `${branchId}\u0000${itemId}`;
}

export function computeNeeds(item: Pick<ItemView, 'productTypeCode' | 'classificationCode'>): ItemNeeds {
  return { productType: item.productTypeCode === null, classificationMapping: item.classificationCode === null };
}

function externalIdKey(businessId: string, externalId: string): string {
  return `${businessId}\u0000${externalId}`;
}

function itemRecord(businessId: string, item: ItemFixture): ItemRecord {
  const view: ItemView = {
    id: item.id,
    externalId: item.externalId,
    name: item.name,
    sku: item.sku,
    taxCategory: item.taxCategory ?? DEFAULT_TAX_CATEGORY[item.taxTypeCode],
    taxTypeCode: item.taxTypeCode,
    productTypeCode: item.productTypeCode,
    classificationCode: item.classificationCode,
    unitCode: item.unitCode,
    packagingUnitCode: item.packagingUnitCode,
    unitPrice: item.unitPrice,
    stockTracked: item.stockTracked,
    registrationStatus: item.registrationStatus,
    needs: item.needs ? { ...item.needs } : computeNeeds(item),
  };
  return { view, businessId, deleted: item.deleted, registeredBranchIds: [], registrations: 0 };
}

export function purchaseRecord(business: BusinessFixture, purchase: PurchaseFixture): PurchaseRecord {
  const lines = purchase.lines.map((line) => {
    const total = roundHalfUp(line.quantity * line.unitPrice);
    const taxAmount = roundHalfUp((total * line.taxRate) / (100 + line.taxRate));
    const { description, hsCode, quantity, unitPrice, taxRate, itemCode } = line;
    return {
      ...{ description, hsCode, quantity, unitPrice, taxRate, taxAmount, total },
      ...(itemCode === undefined ? {} : { itemCode }),
    };
  });
  const cents = (pick: (l: (typeof lines)[number]) => number) =>
    lines.reduce((sum, l) => sum + Math.round(pick(l) * 100), 0);
  const totalCents = cents((l) => l.total);
  const vatCents = cents((l) => l.taxAmount);
  const branch = business.branches.find((b) => b.id === purchase.branchId);
  return {
    businessId: business.id,
    visible: !purchase.pendingPull,
    view: {
      id: purchase.id,
      status: purchase.status,
      supplier: { ...purchase.supplier },
      supplierInvoiceNumber: purchase.supplierInvoiceNumber,
      invoiceDate: purchase.invoiceDate,
      branch: branch?.name ?? purchase.branchId,
      totals: { subtotal: (totalCents - vatCents) / 100, vat: vatCents / 100, total: totalCents / 100 },
      lines,
      confirmationError: purchase.confirmationError,
    },
  };
}
