/**
 * Polls until the stock ledgers have gone quiet (no line waiting for a movement, no movement unsettled: their
 * `getState`) and the checker's expectations about the world all hold, or the deadline passes; then, once settled,
 * reads again after a quiet spell so that a late duplicate (a retry still in flight when everything looked right)
 * is still caught. The verdicts returned are the last read's. The budgets are not waited for: a window already
 * exceeded stays exceeded, so they are judged once, on the last read. The ledgers' state only says when to judge;
 * the verdicts come from the sandbox alone.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxInspector } from '../../sandbox/inspector.js';
import { check, type CheckInput, type Verdicts } from './checker.js';
import { backlogOf, isQuiet, type LedgerBacklog } from './ledgers.js';
import type { RequestTape } from './request-tape.js';

const POLL_MS = 2_000;
const QUIET_MS = 10_000;

/** What the checker knows of its own: what was started, the world's stock tracking and applications. */
export type RunKnowledge = Pick<CheckInput, 'sales' | 'stockTracked' | 'firstBranchOf' | 'applications' | 'windowMs'>;

/** Reads the sandbox (documents, movements, the requests recorded since the last read) and checks it. */
export async function readVerdicts(
  inspector: SandboxInspector,
  tape: RequestTape,
  known: RunKnowledge,
): Promise<Verdicts> {
  const [documents, movements] = await Promise.all([inspector.documents(), inspector.stockMovements()]);
  tape.read();
  return check({ ...known, documents, movements, requests: tape.records(), requestsMissed: tape.missed() });
}

export interface Settlement {
  verdicts: Verdicts;
  /** Epoch ms when every expectation first held; null when they never did before the deadline. */
  settledAt: number | null;
  /** The ledgers' backlog at the last read; null when it could not be read. */
  ledgers: LedgerBacklog | null;
}

/** The ledgers' backlog, or null when it cannot be read now (a worker restarting): not quiet, read again. */
async function backlogOrNull(read: () => Promise<LedgerBacklog>): Promise<LedgerBacklog | null> {
  try {
    return await read();
  } catch {
    return null;
  }
}

export async function awaitSettled(
  read: () => Promise<Verdicts>,
  deadline: number,
  onPoll: (v: Verdicts, ledgers: LedgerBacklog | null) => void = () => {},
  readLedgerBacklog: () => Promise<LedgerBacklog> = async () => backlogOf([]),
): Promise<Settlement> {
  const settled = (v: Verdicts, b: LedgerBacklog | null) => b !== null && isQuiet(b) && v.ok;
  let ledgers = await backlogOrNull(readLedgerBacklog);
  let verdicts = await read();
  while (!settled(verdicts, ledgers) && Date.now() < deadline) {
    onPoll(verdicts, ledgers);
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
    ledgers = await backlogOrNull(readLedgerBacklog);
    verdicts = await read();
  }
  if (!settled(verdicts, ledgers)) return { verdicts, settledAt: null, ledgers };
  const settledAt = Date.now();
  await sleep(QUIET_MS);
  return { verdicts: await read(), settledAt, ledgers: await backlogOrNull(readLedgerBacklog) };
}
