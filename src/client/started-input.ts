/**
 * The input an execution was started with, read from the first event of its history and decoded with the client's
 * own data converter: it needs no worker (a query would), works for a closed sale as for a running one, and reads an
 * encrypted history when the client has the keys (PAYLOAD_KEYS), as the worker that runs the sale does.
 */
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

/** The codecs undo their encoding in the reverse order of the one they encoded in, as the SDK decodes. */
async function decode(client: Client, payloads: Payload[], context: WorkflowSerializationContext): Promise<Payload[]> {
  let decoded = payloads;
  for (const codec of [...client.options.loadedDataConverter.payloadCodecs].reverse())
    decoded = await codec.decode(decoded, context);
  return decoded;
}
