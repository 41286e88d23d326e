/**
 * Polls until the stock ledgers have gone quiet (no line waiting for a movement, no movement unsettled: their
 * `getState`), the stock-ins have been told every invoice's last review (theirs), and the checker's expectations
 * about the world all hold, or the deadline passes; then, once settled, reads again after a quiet spell so that a
 * late duplicate (a retry still in flight when everything looked right) is still caught. The verdicts returned are
 * the last read's. The budgets are not waited for: a window already exceeded stays exceeded, so they are judged
 * once, on the last read. The workflows' state only says when to judge; the verdicts come from the sandbox alone.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxInspector } from '../../sandbox/inspector.js';
import { check, type CheckInput, type Verdicts } from './checker.js';
import type { IncomingInput } from './incoming.js';
import { backlogOf, isQuiet, type LedgerBacklog } from './ledgers.js';
import type { RequestTape } from './request-tape.js';

const POLL_MS = 2_000;
const QUIET_MS = 10_000;

/**
 * What the checker knows of its own: what was started, the world's stock tracking and applications, and the supplier
 * invoices planned (their statuses are the sandbox's).
 */
export type RunKnowledge = Pick<
  CheckInput,
  'sales' | 'stockTracked' | 'firstBranchOf' | 'applications' | 'windowMs'
> & {
  incoming?: Omit<IncomingInput, 'recorded'>;
};

/** Reads the sandbox (documents, movements, supplier invoices, the requests recorded since the last read) and checks it. */
export async function readVerdicts(
  inspector: SandboxInspector,
  tape: RequestTape,
  known: RunKnowledge,
): Promise<Verdicts> {
  const { incoming, ...rest } = known;
  const [documents, movements, recorded] = await Promise.all([
    inspector.documents(),
    inspector.stockMovements(),
    incoming ? inspector.purchases() : Promise.resolve([]),
  ]);
  tape.read();
  return check({
    ...rest,
    documents,
    movements,
    requests: tape.records(),
    requestsMissed: tape.missed(),
    ...(incoming ? { incoming: { ...incoming, recorded } } : {}),
  });
}

export interface Settlement {
  verdicts: Verdicts;
  /** Epoch ms when every expectation first held; null when they never did before the deadline. */
  settledAt: number | null;
  /** The ledgers' backlog at the last read; null when it could not be read. */
  ledgers: LedgerBacklog | null;
  /** Invoices the stock-ins had not caught up with at the last read; null when they could not be read. */
  untold: string[] | null;
}

/** The workflows' answer, or null when it cannot be read now (a worker restarting): not quiet, read again. */
async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch {
    return null;
  }
}

/** `readUntold`: the invoices the stock-ins have not caught up with (stock-ins.ts); default none. */
export async function awaitSettled(
  read: () => Promise<Verdicts>,
  deadline: number,
  onPoll: (v: Verdicts, ledgers: LedgerBacklog | null, untold: string[] | null) => void = () => {},
  readLedgerBacklog: () => Promise<LedgerBacklog> = async () => backlogOf([]),
  readUntold: () => Promise<string[]> = async () => [],
): Promise<Settlement> {
  const settled = (v: Verdicts, b: LedgerBacklog | null, untold: string[] | null) =>
    b !== null && isQuiet(b) && untold?.length === 0 && v.ok;
  let ledgers = await orNull(readLedgerBacklog);
  let untold = await orNull(readUntold);
  let verdicts = await read();
  while (!settled(verdicts, ledgers, untold) && Date.now() < deadline) {
    onPoll(verdicts, ledgers, untold);
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
    ledgers = await orNull(readLedgerBacklog);
    untold = await orNull(readUntold);
    verdicts = await read();
  }
  if (!settled(verdicts, ledgers, untold)) return { verdicts, settledAt: null, ledgers, untold };
  const settledAt = Date.now();
  await sleep(QUIET_MS);
  return {
    verdicts: await read(),
    settledAt,
    ledgers: await orNull(readLedgerBacklog),
    untold: await orNull(readUntold),
  };
}
