/**
 * The floor's one activity: a real GET to the compliance service (the lookup code lists, no business scope), so the
 * floor includes one HTTP round trip as the sale's signing activity does.
 */
import type { ComplianceClient } from '../../src/compliance/client.js';

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
