import type { Connection } from '@temporalio/client';
import { Connection as ClientConnection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../tools/temporal-cli/dev-server.js';
import { requireSearchAttributes, SearchAttributesError } from '../../src/temporal/ensure-search-attributes.js';
import { projectSearchAttributes } from '../../src/contracts/search-attributes.js';

/** A connection whose operator service answers as a namespace the worker may not administer. */
function refusingConnection(existing: Record<string, number>, code: number): Connection {
  const denied = Object.assign(new Error('Request unauthorized.'), {
    code,
    details: 'Request unauthorized.',
    metadata: {},
  });
  return {
    operatorService: {
      listSearchAttributes: async () => ({ customAttributes: existing }),
      addSearchAttributes: async () => {
        throw denied;
      },
    },
  } as unknown as Connection;
}

describe('requireSearchAttributes', () => {
  it('names the missing attributes and the exact commands an administrator runs when it may not add them', async () => {
    const connection = refusingConnection({ BusinessId: 2 }, 7);
    const err = await requireSearchAttributes(connection, {
      namespace: 'sales.a1b2c',
      address: 'temporal.internal:7233',
      keys: projectSearchAttributes,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SearchAttributesError);
    const message = (err as Error).message;
    expect(message).toContain('may not register the search attributes of namespace "sales.a1b2c" (permission denied)');
    expect(message).toContain(
      'TraderInvoiceNumber, FiscalStatus, CuInvoiceNumber, FiscalDay, NeedsAttention, AttentionReason, Application',
    );
    expect(message).not.toMatch(/need BusinessId/);
    expect(message).toContain(
      'temporal operator search-attribute create --address temporal.internal:7233 --namespace sales.a1b2c --name TraderInvoiceNumber --name FiscalStatus --name CuInvoiceNumber --name FiscalDay --name AttentionReason --name Application --type Keyword',
    );
    expect(message).toContain(
      'temporal operator search-attribute create --address temporal.internal:7233 --namespace sales.a1b2c --name NeedsAttention --type Bool',
    );
    expect(message).toContain(
      'tcld namespace search-attributes add --namespace sales.a1b2c --search-attribute "TraderInvoiceNumber=Keyword"',
    );
  });

  it('refuses an attribute registered with another type', async () => {
    const connection = refusingConnection({ BusinessId: 3 /* Int */, TraderInvoiceNumber: 2 }, 7);
    await expect(
      requireSearchAttributes(connection, { namespace: 'ns', address: 'a:7233', keys: projectSearchAttributes }),
    ).rejects.toThrow(/BusinessId already exists in namespace ns with a different type/);
  });

  describe('on a server started without them', () => {
    let server: DevServer;
    let connection: ClientConnection;

    beforeAll(async () => {
      server = await startDevServer({ headless: true, searchAttributes: [] });
      connection = await ClientConnection.connect({ address: server.address });
    });

    afterAll(async () => {
      await connection?.close();
      await server?.stop();
    });

    it('registers them, then finds them present', async () => {
      const options = { namespace: server.namespace, address: server.address, keys: projectSearchAttributes };
      expect(await requireSearchAttributes(connection, options)).toBe('registered');
      const { customAttributes } = await connection.operatorService.listSearchAttributes({
        namespace: server.namespace,
      });
      for (const key of projectSearchAttributes) expect(customAttributes?.[key.name]).toBeDefined();
      expect(await requireSearchAttributes(connection, options)).toBe('present');
    });
  });
});
