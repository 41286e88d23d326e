// The client against a stand-in Temporal client: what it sends, and how it words Temporal's failures.
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { SaleInputError } from '../../src/client/errors.js';
import {
  MAPPINGS_PER_UPDATE,
  StockInClient,
  StockInNotStartedError,
  StockInOperationError,
} from '../../src/client/stock-in.js';
import { MappingsCsvError } from '../../src/client/stock-in-csv.js';
import { parseMapLine, parseMappings } from '../../src/client/stock-in-input.js';

interface Sent {
  workflowId: string;
  name: string;
  args: unknown[];
}

/** Records every update and query; `answer` says what each returns (or throws). */
function standIn(answer: (call: Sent) => unknown = () => ({ mappings: 0 }), status = 'RUNNING') {
  const sent: Sent[] = [];
  const handle = (workflowId: string) => {
    const call = async (name: string, args: unknown[]) => {
      const call = { workflowId, name, args };
      sent.push(call);
      return answer(call);
    };
    return {
      workflowId,
      executeUpdate: (update: { name: string }, options: { args: unknown[] }) => call(update.name, options.args),
      query: (query: { name: string }) => call(query.name, []),
      describe: async () => {
        if (status === 'NONE') throw new WorkflowNotFoundError('not found', workflowId, undefined);
        return { status: { name: status } };
      },
    };
  };
  const client = { workflow: { getHandle: handle } } as unknown as Client;
  return { client, sent };
}

const mapping = (i: number) => ({ supplierPin: 'P1', by: 'code' as const, key: `C${i}`, itemId: `itm_${i}` });

describe('StockInClient', () => {
  it('speaks to the business’s stock-in on its task queue, and reads the mappings from its buckets', async () => {
    const { client, sent } = standIn((call) => (call.workflowId.endsWith(':7') ? [mapping(7)] : []));
    expect(await new StockInClient(client, { taskQueue: 'shop' }).mappings('biz_1')).toEqual([mapping(7)]);
    expect(sent).toHaveLength(32);
    expect(sent[0]).toEqual({ workflowId: 'stock-in-mappings:shop:biz_1:0', name: 'listMappings', args: [] });
    await new StockInClient(client).state('biz_1');
    expect(sent[32]).toMatchObject({ workflowId: 'stock-in:sales:biz_1', name: 'getState' });
  });

  it('sends a large import in several updates, only the first replacing', async () => {
    let held = 0;
    const { client, sent } = standIn((call) => {
      const { mappings } = call.args[0] as { mappings: unknown[] };
      held += mappings.length;
      return { mappings: held };
    });
    const count = MAPPINGS_PER_UPDATE * 2 + 5;
    const all = Array.from({ length: count }, (_, i) => mapping(i));
    const result = await new StockInClient(client).putMappings('biz_1', all, { replace: true });
    expect(result).toEqual({ mappings: count, imported: count });
    expect(
      sent.map((s) => [
        (s.args[0] as { mappings: unknown[] }).mappings.length,
        (s.args[0] as { replace: boolean }).replace,
      ]),
    ).toEqual([
      [MAPPINGS_PER_UPDATE, true],
      [MAPPINGS_PER_UPDATE, false],
      [5, false],
    ]);
    // Checked and defaulted before sending.
    expect((sent[0]!.args[0] as { mappings: unknown[] }).mappings[0]).toEqual({ ...mapping(0), factor: 1 });
  });

  it('replaces with nothing when asked to: one update, no mappings', async () => {
    const { client, sent } = standIn();
    await new StockInClient(client).putMappings('biz_1', [], { replace: true });
    expect(sent.map((s) => s.args[0])).toEqual([{ mappings: [], replace: true }]);
  });

  it('imports a CSV as the merchant’s, and sends nothing when a row is bad', async () => {
    const { client, sent } = standIn(() => ({ mappings: 7 }));
    const stockIn = new StockInClient(client);
    const csv =
      'supplierPin,by,key,itemId,factor,notStock,source\nP1,code,C1,itm_1,2,false,learned\nP1,code,FEE,,,true,\n';
    expect(await stockIn.importMappingsCsv('biz_1', csv)).toEqual({ mappings: 7, imported: 2 });
    expect(sent[0]!.args[0]).toEqual({
      mappings: [
        { supplierPin: 'P1', by: 'code', key: 'C1', itemId: 'itm_1', factor: 2 },
        { supplierPin: 'P1', by: 'code', key: 'FEE', notStock: true },
      ],
      replace: false,
    });
    await expect(stockIn.importMappingsCsv('biz_1', `${csv}P1,code,C2,,,,\n`)).rejects.toBeInstanceOf(MappingsCsvError);
    expect(sent).toHaveLength(1);
  });

  it('refuses bad arguments before anything is sent, naming the field', async () => {
    const { client, sent } = standIn();
    const stockIn = new StockInClient(client);
    await expect(stockIn.mapLine('biz_1', { purchaseId: 'pur_1', line: -1, notStock: true })).rejects.toThrow(
      /^invalid mapLine request: line /,
    );
    await expect(stockIn.state(' ')).rejects.toThrow('invalid stock-in reference: businessId must not be empty');
    await expect(
      stockIn.removeMapping('biz_1', { supplierPin: 'P1', by: 'name' as 'code', key: 'x' }),
    ).rejects.toBeInstanceOf(SaleInputError);
    expect(sent).toEqual([]);
  });

  it('says plainly that no stock-in runs for the business', async () => {
    const { client } = standIn((call) => {
      throw new WorkflowNotFoundError('workflow not found', call.workflowId, undefined);
    }, 'NONE');
    const failure = await new StockInClient(client).state('biz_9').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(StockInNotStartedError);
    expect(failure).toBeInstanceOf(StockInOperationError);
    expect(failure).toMatchObject({ failure: 'not_found', operation: 'getState', workflowId: 'stock-in:sales:biz_9' });
    expect((failure as Error).message).toBe(
      'no stock-in for business biz_9 on task queue sales (stock-in:sales:biz_9): it starts with the first supplier ' +
        'invoice the purchases sync tells it, for a business with stock-in settings; check the business id and the ' +
        'task queue',
    );
  });

  it('tells an ended stock-in from one never started', async () => {
    const { client } = standIn((call) => {
      throw new WorkflowNotFoundError('workflow execution already completed', call.workflowId, undefined);
    }, 'TERMINATED');
    await expect(new StockInClient(client).putMappings('biz_9', [mapping(1)])).rejects.toThrow(
      'the stock-in of business biz_9 (stock-in:sales:biz_9) has ended (terminated)',
    );
  });

  it('passes on the validator’s refusal as the workflow worded it', async () => {
    const { client } = standIn(() => {
      const cause = ApplicationFailure.nonRetryable(
        'line 2 of invoice pur_1 is not waiting for a mapping (the invoice is added)',
      );
      throw new WorkflowUpdateFailedError('Workflow Update failed', cause);
    });
    const failure = await new StockInClient(client)
      .mapLine('biz_1', { purchaseId: 'pur_1', line: 2, itemId: 'itm_1' })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(StockInOperationError);
    expect(failure).not.toBeInstanceOf(StockInNotStartedError);
    expect(failure).toMatchObject({ failure: 'rejected', operation: 'mapLine' });
    expect((failure as Error).message).toBe(
      'mapLine of stock-in:sales:biz_1 was refused: line 2 of invoice pur_1 is not waiting for a mapping ' +
        '(the invoice is added)',
    );
  });
});

describe('the stock-in’s arguments', () => {
  const problem = (parse: () => unknown) => {
    try {
      parse();
    } catch (err) {
      expect(err).toBeInstanceOf(SaleInputError);
      return (err as SaleInputError).message;
    }
    throw new Error('accepted');
  };

  it('names the field at fault where the contract’s union says only "Invalid input"', () => {
    expect(problem(() => parseMapLine({ purchaseId: 'p', line: 0 }))).toBe(
      'invalid mapLine request: itemId is required (or notStock: true, for a line that is not stock)',
    );
    expect(problem(() => parseMapLine({ purchaseId: 'p', line: 0, itemId: 'i', factor: 'x' }))).toBe(
      'invalid mapLine request: factor must be a number',
    );
    expect(problem(() => parseMapLine({ purchaseId: 'p', line: 0, notStock: true, itemId: 'i' }))).toBe(
      'invalid mapLine request: notStock cannot be given with itemId or factor: a line is an item or not stock, not both',
    );
    expect(problem(() => parseMapLine({ purchaseId: 'p', line: 0, notStock: false }))).toMatch(
      /^invalid mapLine request: notStock /,
    );
    expect(problem(() => parseMapLine('p'))).toMatch(/^invalid mapLine request: \(input\) must be an object/);
    expect(parseMapLine({ purchaseId: 'p', line: 3, itemId: 'i' })).toEqual({
      purchaseId: 'p',
      line: 3,
      itemId: 'i',
      factor: 1,
    });
  });

  it('names the mapping of a list by its index', () => {
    expect(problem(() => parseMappings([{ ...mapping(1) }, { ...mapping(2), factor: -1 }], false))).toBe(
      'invalid putMappings request: mappings[1].factor must be more than 0',
    );
    expect(problem(() => parseMappings([mapping(1)], 'yes'))).toBe(
      'invalid putMappings request: replace must be a boolean',
    );
    expect(problem(() => parseMappings('all', false))).toBe('invalid putMappings request: mappings must be a list');
  });
});
