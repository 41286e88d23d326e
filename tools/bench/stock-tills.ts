/**
 * Closed-loop tills for the stock section: each rings up a sale and waits for its receipt (the one call a till makes,
 * till.ts), then rings up the next, so the application always has sales waiting to be signed (a backlog) for as long
 * as the tills run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import type { BenchTemporal } from './env.js';
import { tillCall } from './till.js';

/** A till whose call failed (its worker killed under it) asks again after this. */
const TILL_RETRY_MS = 500;

/** A sale a till rang up, and its workflow. */
export interface Rung {
  sale: SaleInput;
  workflowId: string;
}

export interface Tills {
  /** Every sale rung up so far, in the order the tills took them. */
  rung: Rung[];
  /** Resolves once the first sale is signed. */
  firstSigned: Promise<void>;
  /** The tills ring up no new sale; resolves once each till's last one is signed. */
  stop(): Promise<void>;
  /** The tills ring up no new sale; their last ones are left to be signed whenever they are (a killed worker's may wait a minute). */
  halt(): void;
}

/** A sale the service will not sign (parked): the run cannot measure what it means to, so it stops. */
class TillRefused extends Error {
  override readonly name = 'TillRefused';
}

/** `tills` tills on `taskQueue`, sale n being `make(n)`; every workflow id is also pushed to `started`. */
export function startTills(
  t: BenchTemporal,
  taskQueue: string,
  tills: number,
  make: (n: number) => SaleInput,
  started: string[],
): Tills {
  const rung: Rung[] = [];
  let next = 0;
  let stopping = false;
  let signalFirst: () => void = () => undefined;
  const firstSigned = new Promise<void>((resolve) => {
    signalFirst = resolve;
  });
  const till = async () => {
    while (!stopping) {
      const sale = make(next++);
      const workflowId = saleWorkflowId(sale.businessId, sale.traderInvoiceNumber);
      rung.push({ sale, workflowId });
      started.push(workflowId);
      for (;;) {
        try {
          const answer = await tillCall(t, taskQueue, sale);
          if (answer.signed) break;
          if (answer.state.parked)
            throw new TillRefused(`stock: sale ${sale.traderInvoiceNumber} parked: ${answer.state.parked.code}`);
        } catch (err) {
          if (err instanceof TillRefused) throw err;
          // The worker killed under the call, or the wait ended unsigned: the same call again finds the same sale.
          await sleep(TILL_RETRY_MS);
        }
      }
      signalFirst();
    }
  };
  const running = Promise.all(Array.from({ length: tills }, till));
  // A refused sale fails the run when it is stopped; until then the other tills go on.
  running.catch(() => undefined);
  return {
    rung,
    firstSigned,
    stop: async () => {
      stopping = true;
      await running;
    },
    halt: () => {
      stopping = true;
    },
  };
}
