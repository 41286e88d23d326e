// `npm run tenants -- --outages`: the sales waiting out an outage, per application, from Temporal's visibility.
// Temporal not reached leaves the counts unknown (the caller says why) and the tenants' report as it is.
import { Client } from '@temporalio/client';
import { outageSalesQuery } from '../client/sale-queries.js';
import type { Env } from '../config/env.js';
import { connectClient, loadTemporalSettings } from '../temporal/connection.js';

/** Per application, how many of its running sales wait out an outage; null when not counted. */
export type OutageCounts = Map<string, number | null>;

/**
 * `applications` null: a single-key fleet, whose sales carry no application, so its one tenant (`fleetTenant`) gets
 * the count of the whole task queue.
 */
export async function countOutageWaits(
  env: Env,
  taskQueue: string,
  applications: readonly string[] | null,
  fleetTenant: string,
): Promise<{ counts: OutageCounts; problem?: string }> {
  const named = applications ?? [fleetTenant];
  try {
    const queries = named.map((application) => outageSalesQuery(taskQueue, applications ? application : undefined));
    const settings = loadTemporalSettings(env);
    const connection = await connectClient(settings);
    try {
      const client = new Client({ connection, namespace: settings.namespace });
      const counts = await Promise.all(queries.map(async (query) => (await client.workflow.count(query)).count));
      return { counts: new Map(named.map((application, index) => [application, counts[index]!])) };
    } finally {
      await connection.close();
    }
  } catch (err) {
    return {
      counts: new Map(named.map((application) => [application, null])),
      problem: err instanceof Error ? err.message : String(err),
    };
  }
}
