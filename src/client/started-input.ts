// From the first event of its history: needs no worker (a query would) and works for a closed sale too.
import type { Client } from '@temporalio/client';
import type { Payload, WorkflowSerializationContext } from '@temporalio/common';

export async function readStartedInput(
  client: Client,
  workflowId: string,
  runId: string | undefined,
): Promise<unknown> {
  // One event, not the whole history: a sale's can hold hundreds.
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, ...(runId === undefined ? {} : { runId }) },
    maximumPageSize: 1,
  });
  const payloads = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const context: WorkflowSerializationContext = { type: 'workflow', namespace: client.options.namespace, workflowId };
  const [first] = await decode(client, payloads as Payload[], context);
  return first === undefined ? undefined : client.options.loadedDataConverter.payloadConverter.fromPayload(first);
}

/** In the reverse order of encoding, as the SDK decodes. */
async function decode(client: Client, payloads: Payload[], context: WorkflowSerializationContext): Promise<Payload[]> {
  let decoded = payloads;
  for (const codec of [...client.options.loadedDataConverter.payloadCodecs].reverse())
    decoded = await codec.decode(decoded, context);
  return decoded;
}
