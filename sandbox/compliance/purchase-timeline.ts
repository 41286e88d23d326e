import type { ComplianceFixture, PurchaseFixture } from './fixture-schema.js';
import type { PurchaseRecord } from './model.js';
import type { BusinessRecord } from './state.js';

/** When an invoice reaches the service and how its review moves, counted in the business's pulls. */
export interface PurchasePlan {
  /** Held until this pull of the business (undefined: the first pull after it was held). */
  arrivesAtPull: number | undefined;
  reviews: PurchaseFixture['reviews'];
}

/**
 * What happens to supplier invoices over time, measured in pulls so tests and demos are deterministic: a pull
 * fetches the invoices held for it (late ones can carry an old invoice date) and shows the reviews done on the
 * dashboard since (C9, C57). Counts and plans live in WeakMaps keyed by the state's records, which a reset
 * replaces, so a reset starts the world over without telling this class.
 */
export class PurchaseTimeline {
  private readonly pulls = new WeakMap<BusinessRecord, number>();
  private readonly plans = new WeakMap<PurchaseRecord, PurchasePlan>();
  private fixturePlans: Map<string, PurchasePlan> | undefined;

  constructor(private readonly fixture: ComplianceFixture) {}

  /** The plan of an invoice added at run time (the inspection API). */
  plan(record: PurchaseRecord, plan: PurchasePlan): void {
    this.plans.set(record, plan);
  }

  pullsOf(business: BusinessRecord): number {
    return this.pulls.get(business) ?? 0;
  }

  /** One pull of the business: fetches what is due, applies what was reviewed; returns the invoices fetched. */
  pull(business: BusinessRecord, own: readonly PurchaseRecord[]): PurchaseRecord[] {
    const pull = this.pullsOf(business) + 1;
    this.pulls.set(business, pull);
    const fetched: PurchaseRecord[] = [];
    for (const record of own) {
      const plan = this.planOf(record);
      if (!record.visible && (plan?.arrivesAtPull ?? pull) <= pull) {
        record.visible = true;
        fetched.push(record);
      }
      for (const review of plan?.reviews ?? []) {
        if (review.atPull !== pull) continue;
        record.view.status = review.status;
        record.view.confirmationError = review.confirmationError;
      }
    }
    return fetched;
  }

  private planOf(record: PurchaseRecord): PurchasePlan | undefined {
    const added = this.plans.get(record);
    if (added) return added;
    this.fixturePlans ??= new Map(
      this.fixture.businesses.flatMap((b) =>
        b.purchases.map((p) => [p.id, { arrivesAtPull: p.arrivesAtPull, reviews: p.reviews }] as const),
      ),
    );
    return this.fixturePlans.get(record.view.id);
  }
}
