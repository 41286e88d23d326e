import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { PurchaseEvent } from '../../src/contracts/purchases-sync.js';
import type { PurchaseEventSink } from '../../src/purchases/event-sink.js';
import { forwardTo } from '../helpers/forward.js';
import { closeTestEnv, getTestEnv } from '../helpers/temporal.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';
import { startPurchasesStack, type PurchasesStack, type PurchasesStackOptions } from './stack.js';

export { DEMO, supplierInvoice } from './stack.js';
export type { PurchasesStack };

/** One purchases stack for the test file, started before its tests and closed after them. */
export function usePurchasesStack(options: () => PurchasesStackOptions): PurchasesStack {
  let current: PurchasesStack | undefined;
  beforeAll(async () => {
    const env = await getTestEnv();
    current = await startPurchasesStack(
      { client: env.client, nativeConnection: env.nativeConnection, namespace: env.namespace ?? 'default' },
      await workflowBundle(),
      options(),
    );
  });
  afterAll(async () => {
    await current?.close();
    await closeTestEnv();
  });
  return forwardTo(() => current);
}

/** A fresh directory for the file's NDJSON sinks, removed after the file. */
export function useTempDir(): { path(name: string): string } {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'purchases-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    path(name) {
      if (!dir) throw new Error('used before beforeAll');
      return join(dir, name);
    },
  };
}

/** The events an NDJSON file holds, in order. */
export async function eventsIn(path: string): Promise<PurchaseEvent[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as PurchaseEvent);
}

/** Ids that occur more than once. */
export function duplicates(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
}

/** Wraps a sink: counts deliveries, waits `delayMs` before each, and holds them while `gate` is closed. */
export class ObservedSink implements PurchaseEventSink {
  readonly description: string;
  readonly calls: string[] = [];
  private opened: Promise<void> = Promise.resolve();
  private release: (() => void) | undefined;

  constructor(
    private readonly inner: PurchaseEventSink,
    private readonly delayMs = 0,
  ) {
    this.description = `observed ${inner.description}`;
  }

  /** Holds every delivery from now until open(). */
  hold(): void {
    this.opened = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  open(): void {
    this.release?.();
  }

  async deliver(event: PurchaseEvent, options?: { signal?: AbortSignal }): Promise<void> {
    this.calls.push(event.id);
    await this.opened;
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    await this.inner.deliver(event, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
