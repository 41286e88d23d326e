// `npm run tenants -- --outages`: the sales waiting out an outage, per application, from Temporal's visibility.
import { Client } from '@temporalio/client';
import { outageSalesQuery } from '../client/sale-queries.js';
import type { Env } from '../config/env.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { connectClient, loadTemporalSettings } from '../temporal/connection.js';

/** Per application, how many of its running sales wait out an outage; null when not counted. */
export type OutageCounts = Map<string, number | null>;

/**
 * Without a tenants file the sales carry no application, so the one tenant gets the count of the whole task queue.
 * Temporal not reached leaves the counts unknown, said in a note: never the exit code.
 */
export async function countOutageWaits(
  env: Env,
  taskQueue: string | undefined,
  applications: readonly string[],
  fromFile: boolean,
): Promise<OutageCounts> {
  const named = fromFile ? applications : [applications[0] ?? ''];
  try {
    const queue = taskQueue ?? WORKFLOW_TASK_QUEUE;
    const queries = named.map((application) => outageSalesQuery(queue, fromFile ? application : undefined));
    const settings = loadTemporalSettings(env);
    const connection = await connectClient(settings);
    try {
      const client = new Client({ connection, namespace: settings.namespace });
      const counts = await Promise.all(queries.map(async (query) => (await client.workflow.count(query)).count));
      return new Map(named.map((application, index) => [application, counts[index]!]));
    } finally {
      await connection.close();
    }
  } catch (err) {
    const problem = err instanceof Error ? err.message : String(err);
    console.error(`note: sales waiting out an outage not counted (unknown): ${problem}`);
    return new Map(named.map((application) => [application, null]));
  }
}
