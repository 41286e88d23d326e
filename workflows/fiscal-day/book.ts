import {
  addBands,
  emptyDay,
  type DayEntry,
  type FiscalDayCarry,
  type FiscalDayInput,
  type FiscalDaySummary,
  type NumberRange,
  type TaxBands,
} from '../../src/contracts/fiscal-day.js';

/** Unnumbered receipts are told apart by their document ids, at most this many; past it each counts as it comes. */
const UNNUMBERED_IDS_KEPT = 500;
/** Gap ranges named in a summary per numbering; `missing` counts them all. */
const GAPS_LISTED = 500;

/**
 * One control unit's day: every signed document counted once, by its receipt number (kept as ranges, so a day of
 * 10,000 receipts in order is one range), the totals per tax letter in cents, and what came after the close.
 */
export class DayBook {
  readonly summary: FiscalDaySummary;
  private readonly counted: Map<string, Array<[number, number]>>;
  private readonly unnumberedIds: Set<string>;
  private amendment: FiscalDayCarry['amendment'];

  constructor(
    private readonly input: FiscalDayInput,
    closesAt: string,
  ) {
    const carried = input.carried;
    this.summary = carried?.summary ?? emptyDay(input, closesAt);
    this.counted = new Map(Object.entries(carried?.counted ?? {}).map(([series, text]) => [series, unpack(text)]));
    this.unnumberedIds = new Set(carried?.unnumberedIds ?? []);
    this.amendment = carried?.amendment ?? null;
  }

  get closed(): boolean {
    return this.summary.status === 'closed';
  }

  /** False when the document was counted already (an activity retried, a worker killed between). */
  take(entry: DayEntry): boolean {
    if (!this.claim(entry)) return false;
    const { summary } = this;
    summary.receipts[entry.label] = (summary.receipts[entry.label] ?? 0) + 1;
    addBands(summary.taxes, entry.taxes);
    if (entry.branchId && !summary.branchIds.includes(entry.branchId) && summary.branchIds.length < 20)
      summary.branchIds.push(entry.branchId);
    if (this.closed) {
      this.amendment ??= { receipts: {}, taxes: {} };
      this.amendment.receipts[entry.label] = (this.amendment.receipts[entry.label] ?? 0) + 1;
      addBands(this.amendment.taxes, entry.taxes);
    }
    return true;
  }

  close(at: string): void {
    this.summary.status = 'closed';
    this.summary.closedAt = at;
  }

  /** What came since the close and was not delivered yet; numbered, and cleared once taken. */
  takeAmendment(): { number: number; receipts: Record<string, number>; taxes: TaxBands } | undefined {
    const amendment = this.amendment;
    if (!amendment) return undefined;
    this.amendment = null;
    this.summary.amendments++;
    return { number: this.summary.amendments, ...amendment };
  }

  get amendmentWaiting(): boolean {
    return this.amendment !== null;
  }

  /** Numbers never seen between the first and the last, in all numberings. */
  missing(): number {
    return Object.values(this.summary.numbering).reduce((sum, n) => sum + n.missing, 0);
  }

  carry(): FiscalDayCarry {
    return {
      schema: 1,
      summary: this.summary,
      counted: Object.fromEntries([...this.counted].map(([series, ranges]) => [series, pack(ranges)])),
      unnumberedIds: [...this.unnumberedIds],
      amendment: this.amendment,
    };
  }

  private claim(entry: DayEntry): boolean {
    const number = entry.receiptNumber;
    if (number === null || !Number.isSafeInteger(number)) {
      if (this.unnumberedIds.has(entry.documentId)) return false;
      if (this.unnumberedIds.size < UNNUMBERED_IDS_KEPT) this.unnumberedIds.add(entry.documentId);
      this.summary.unnumbered++;
      return true;
    }
    const series = this.input.settings.numbering === 'label' ? entry.label : 'all';
    const ranges = this.counted.get(series) ?? [];
    if (!insert(ranges, number)) return false;
    this.counted.set(series, ranges);
    this.summary.numbering[series] = numberingOf(ranges);
    return true;
  }
}

/** Adds `n` to sorted, disjoint ranges, merging neighbours; false when it is in one already. */
function insert(ranges: Array<[number, number]>, n: number): boolean {
  let low = 0;
  let high = ranges.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (ranges[mid]![1] < n) low = mid + 1;
    else high = mid;
  }
  const at = ranges[low];
  if (at && at[0] <= n) return false;
  const before = ranges[low - 1];
  const joinsBefore = before !== undefined && before[1] === n - 1;
  const joinsAfter = at !== undefined && at[0] === n + 1;
  if (joinsBefore && joinsAfter) {
    before[1] = at[1];
    ranges.splice(low, 1);
  } else if (joinsBefore) before[1] = n;
  else if (joinsAfter) at[0] = n;
  else ranges.splice(low, 0, [n, n]);
  return true;
}

function numberingOf(ranges: Array<[number, number]>): FiscalDaySummary['numbering'][string] {
  const gaps: NumberRange[] = [];
  let missing = 0;
  for (let i = 1; i < ranges.length; i++) {
    const gap = { from: ranges[i - 1]![1] + 1, to: ranges[i]![0] - 1 };
    missing += gap.to - gap.from + 1;
    if (gaps.length < GAPS_LISTED) gaps.push(gap);
  }
  return { first: ranges[0]![0], last: ranges[ranges.length - 1]![1], gaps, missing };
}

/** Ranges as base-36 gaps and lengths: a day with a gap at every other number carries 4 characters a receipt. */
function pack(ranges: ReadonlyArray<[number, number]>): string {
  let last = 0;
  return ranges
    .map(([from, to]) => {
      const text = `${(from - last).toString(36)}.${(to - from).toString(36)}`;
      last = to;
      return text;
    })
    .join(',');
}

function unpack(text: string): Array<[number, number]> {
  let last = 0;
  return text === ''
    ? []
    : text.split(',').map((range) => {
        const [gap, length] = range.split('.').map((n) => parseInt(n, 36)) as [number, number];
        const from = last + gap;
        last = from + length;
        return [from, last];
      });
}
