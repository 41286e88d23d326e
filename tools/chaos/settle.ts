/**
 * Polls the sandbox until the checker's expectations all hold, or the deadline passes; then, once settled, reads
 * again after a quiet spell so that a late duplicate (a retry still in flight when everything looked right) is
 * still caught. The verdicts returned are the last read's.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxInspector } from '../../sandbox/inspector.js';
import { check, type StartedSale, type Verdicts } from './checker.js';

const POLL_MS = 2_000;
const QUIET_MS = 10_000;

export async function readVerdicts(inspector: SandboxInspector, sales: readonly StartedSale[], stockTracked: (b: string, i: string) => boolean): Promise<Verdicts> {
  const [documents, movements] = await Promise.all([inspector.documents(), inspector.stockMovements()]);
  return check({ sales, documents, movements, stockTracked });
}

export interface Settlement {
  verdicts: Verdicts;
  /** Epoch ms when every expectation first held; null when they never did before the deadline. */
  settledAt: number | null;
}

export async function awaitSettled(read: () => Promise<Verdicts>, deadline: number, onPoll: (v: Verdicts) => void = () => {}): Promise<Settlement> {
  let verdicts = await read();
  while (!verdicts.ok && Date.now() < deadline) {
    onPoll(verdicts);
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
    verdicts = await read();
  }
  if (!verdicts.ok) return { verdicts, settledAt: null };
  const settledAt = Date.now();
  await sleep(QUIET_MS);
  return { verdicts: await read(), settledAt };
}
