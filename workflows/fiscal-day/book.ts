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
  private readonly day: FiscalDaySummary;
  private readonly counted: Map<string, Numbers>;
  /** Numberings taken into since the summary was last read: their gaps are listed again only then. */
  private readonly unlisted = new Set<string>();
  private readonly unnumberedIds: Set<string>;
  private amendment: FiscalDayCarry['amendment'];

  constructor(
    private readonly input: FiscalDayInput,
    closesAt: string,
  ) {
    const carried = input.carried;
    this.day = carried?.summary ?? emptyDay(input, closesAt);
    this.counted = new Map(
      Object.entries(carried?.counted ?? {}).map(([series, text]) => [series, numbersOf(unpack(text))]),
    );
    this.unnumberedIds = new Set(carried?.unnumberedIds ?? []);
    this.amendment = carried?.amendment ?? null;
  }

  /**
   * The day's figures. A burst of entries comes as one workflow task: each entry costs a search among the ranges, and
   * the gaps are listed once, when the summary is read.
   */
  get summary(): FiscalDaySummary {
    for (const series of this.unlisted) this.day.numbering[series] = numberingOf(this.counted.get(series)!);
    this.unlisted.clear();
    return this.day;
  }

  get closed(): boolean {
    return this.day.status === 'closed';
  }

  /** False when the document was counted already (an activity retried, a worker killed between). */
  take(entry: DayEntry): boolean {
    if (!this.claim(entry)) return false;
    const summary = this.day;
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
    this.day.status = 'closed';
    this.day.closedAt = at;
  }

  /** What came since the close and was not delivered yet; numbered, and cleared once taken. */
  takeAmendment(): { number: number; receipts: Record<string, number>; taxes: TaxBands } | undefined {
    const amendment = this.amendment;
    if (!amendment) return undefined;
    this.amendment = null;
    this.day.amendments++;
    return { number: this.day.amendments, ...amendment };
  }

  get amendmentWaiting(): boolean {
    return this.amendment !== null;
  }

  /** Numbers never seen between the first and the last, in all numberings. */
  missing(): number {
    return [...this.counted.values()].reduce((sum, numbers) => sum + missingIn(numbers), 0);
  }

  carry(): FiscalDayCarry {
    return {
      schema: 1,
      summary: this.summary,
      counted: Object.fromEntries([...this.counted].map(([series, numbers]) => [series, pack(numbers.ranges)])),
      unnumberedIds: [...this.unnumberedIds],
      amendment: this.amendment,
    };
  }

  private claim(entry: DayEntry): boolean {
    const number = entry.receiptNumber;
    if (number === null || !Number.isSafeInteger(number)) {
      if (this.unnumberedIds.has(entry.documentId)) return false;
      if (this.unnumberedIds.size < UNNUMBERED_IDS_KEPT) this.unnumberedIds.add(entry.documentId);
      this.day.unnumbered++;
      return true;
    }
    const series = this.input.settings.numbering === 'label' ? entry.label : 'all';
    const numbers = this.counted.get(series) ?? { ranges: [], count: 0 };
    if (!insert(numbers.ranges, number)) return false;
    numbers.count++;
    this.counted.set(series, numbers);
    this.unlisted.add(series);
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

/** A numbering's counted receipts as sorted, disjoint ranges, and how many numbers they hold. */
interface Numbers {
  ranges: Array<[number, number]>;
  count: number;
}

function numbersOf(ranges: Array<[number, number]>): Numbers {
  return { ranges, count: ranges.reduce((sum, [from, to]) => sum + to - from + 1, 0) };
}

function missingIn({ ranges, count }: Numbers): number {
  return ranges.length === 0 ? 0 : ranges[ranges.length - 1]![1] - ranges[0]![0] + 1 - count;
}

function numberingOf(numbers: Numbers): FiscalDaySummary['numbering'][string] {
  const { ranges } = numbers;
  const gaps: NumberRange[] = [];
  for (let i = 1; i < ranges.length && gaps.length < GAPS_LISTED; i++)
    gaps.push({ from: ranges[i - 1]![1] + 1, to: ranges[i]![0] - 1 });
  return { first: ranges[0]![0], last: ranges[ranges.length - 1]![1], gaps, missing: missingIn(numbers) };
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
