/**
 * The floor's one activity: a real GET to the compliance service (the lookup code lists, no business scope), so the
 * floor includes one HTTP round trip as the sale's signing activity does.
 */
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import type { ComplianceClient } from '../../src/compliance/client.js';

/** The floor workflow's own bundle (tools/bench/floor-workflow.ts), bundler output at errors only. */
export function bundleFloor(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./floor-workflow.ts', import.meta.url)),
    logger: new DefaultLogger('ERROR'),
  });
}

export function createFloorActivities(compliance: Pick<ComplianceClient, 'listCodeLists'>) {
  return {
    /** How many code lists the service has: a small answer, so the floor pays for the round trip and little else. */
    async readLookup(): Promise<number> {
      const { data } = await compliance.listCodeLists();
      return data.length;
    },
  };
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;
