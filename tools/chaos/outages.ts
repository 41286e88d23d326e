/**
 * What the run's outages did to the sales started while they lasted, from the sandbox's records and the operation
 * history alone: how many were started during each, and whether each was signed once it ended. A sale cannot be
 * signed while the outage that met it lasts, so one started during it and signed is one that waited it out.
 */

/** An outage as the sandbox listed it after the run, its times in ms since the faults started. */
export interface RunOutage {
  id: string;
  kind: 'service' | 'authority';
  mode: string;
  startsAtMs: number;
  endsAtMs: number;
  /** Requests the sandbox answered (or dropped) for it, or submissions it refused or held. */
  affected: number;
}

export interface OutageExposure extends RunOutage {
  /** Sales whose start was asked while the outage lasted. */
  salesStarted: number;
  /** Of those, signed at or after its end; before it (should never be); never (lost). */
  signedAfter: number;
  signedDuring: number;
  unsigned: number;
  /** From its end to the last of them signed, seconds (null without any signed). */
  lastSignedAfterSeconds: number | null;
}

export interface StartedSale {
  businessId: string;
  traderInvoiceNumber: string;
  /** When its start was asked, ms since the faults started. */
  startedAtMs: number;
}

export const saleKey = (businessId: string, traderInvoiceNumber: string) => `${businessId}\u0000${traderInvoiceNumber}`;

/**
 * Each outage's sales: started within [start, end), and when the sandbox signed each (`signedAtMs` by saleKey, ms since
 * the faults started; absent: never signed).
 */
export function outageExposure(
  outages: readonly RunOutage[],
  started: readonly StartedSale[],
  signedAtMs: ReadonlyMap<string, number>,
): OutageExposure[] {
  return outages.map((o) => {
    const during = started.filter((s) => s.startedAtMs >= o.startsAtMs && s.startedAtMs < o.endsAtMs);
    const signed = during.flatMap((s) => {
      const at = signedAtMs.get(saleKey(s.businessId, s.traderInvoiceNumber));
      return at === undefined ? [] : [at];
    });
    const after = signed.filter((at) => at >= o.endsAtMs);
    return {
      ...o,
      salesStarted: during.length,
      signedAfter: after.length,
      signedDuring: signed.length - after.length,
      unsigned: during.length - signed.length,
      lastSignedAfterSeconds: after.length === 0 ? null : (Math.max(...after) - o.endsAtMs) / 1000,
    };
  });
}

/** Every sale started during an outage was signed once it ended, and none while it lasted. */
export const outagesRidden = (exposures: readonly OutageExposure[]): boolean =>
  exposures.every((e) => e.unsigned === 0 && e.signedDuring === 0);

/** One outage in words, printed with the applications' lines. */
export function outageLine(e: OutageExposure): string {
  const last = e.lastSignedAfterSeconds === null ? '' : `, the last ${e.lastSignedAfterSeconds.toFixed(1)} s after it`;
  return (
    `[chaos] outage ${e.id} (${e.kind}, ${e.mode}) ${(e.startsAtMs / 1000).toFixed(1)}–${(e.endsAtMs / 1000).toFixed(1)} s, ${e.affected} affected: ` +
    `${e.salesStarted} sales started during it, ${e.signedAfter} signed after its end${last}, ${e.signedDuring} signed during it, ${e.unsigned} unsigned`
  );
}

/** The outages' part of the last line. */
export function outagesText(exposures: readonly OutageExposure[]): string {
  const started = exposures.reduce((n, e) => n + e.salesStarted, 0);
  const after = exposures.reduce((n, e) => n + e.signedAfter, 0);
  return `${exposures.length} outage${exposures.length === 1 ? '' : 's'} (${started} sales started during them, ${after} signed after their end)`;
}
