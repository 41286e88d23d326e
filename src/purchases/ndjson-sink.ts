// Opening the file reads the event ids already in it, so each event is in it exactly once. One process per file.
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { SinkDeliveryError, type DeliverOptions, type PurchaseEvent, type PurchaseEventSink } from './event-sink.js';

class NdjsonSink implements PurchaseEventSink {
  readonly description: string;
  /** Appends run one after another: two deliveries never interleave their bytes. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly ids: Set<string>,
    /** The file does not end with a newline (a write was cut short): start the next line on a new one. */
    private needsNewline: boolean,
  ) {
    this.description = `file:${path}`;
  }

  deliver(event: PurchaseEvent, options: DeliverOptions = {}): Promise<void> {
    const write = this.queue.then(() => this.append(event, options.signal));
    this.queue = write.catch(() => undefined);
    return write;
  }

  get size(): number {
    return this.ids.size;
  }

  async close(): Promise<void> {
    await this.queue;
  }

  private async append(event: PurchaseEvent, signal: AbortSignal | undefined): Promise<void> {
    if (this.ids.has(event.id)) return;
    if (signal?.aborted) throw new SinkDeliveryError(`delivery of ${event.id} was cancelled`, true);
    const line = `${this.needsNewline ? '\n' : ''}${JSON.stringify(event)}\n`;
    try {
      await appendFile(this.path, line, 'utf8');
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new SinkDeliveryError(`cannot append to ${this.path}: ${why}`, true, { cause: err });
    }
    this.needsNewline = false;
    this.ids.add(event.id);
  }
}

function eventIdsIn(text: string): Set<string> {
  const ids = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = JSON.parse(line) as { id?: unknown };
      if (typeof parsed.id === 'string') ids.add(parsed.id);
    } catch {
      // A line cut short by a crash: its event was never acknowledged, so it is delivered again.
    }
  }
  return ids;
}

export async function openNdjsonSink(path: string): Promise<NdjsonSink> {
  const absolute = resolve(path);
  await mkdir(dirname(absolute), { recursive: true });
  let text = '';
  try {
    text = await readFile(absolute, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return new NdjsonSink(absolute, eventIdsIn(text), text !== '' && !text.endsWith('\n'));
}
