import { it } from 'vitest';
import { useProcessHarness } from '../workflows/process-logic-harness.js';
const h = useProcessHarness();
it('clock', async () => {
  await h.run({
    pullPurchases: async () => ({ pulled: 0 }),
    listPurchasesPage: async () => ({ purchases: [], nextCursor: null }),
  }, async (s) => {
    const t = async (label: string) => console.log(label, new Date(await s.env.currentTimeMs()).toISOString());
    await t('before');
    const handle = await s.start('purchasesSyncWorkflow', `x-${s.id}`, [{ businessId: 'b' }]);
    await t('started');
    await new Promise((r) => setTimeout(r, 2000));
    await t('2s later');
    console.log(await handle.result());
    await t('after result');
    const { events } = await handle.fetchHistory();
    for (const e of events ?? []) console.log("EV", e.eventType, new Date(Number(e.eventTime?.seconds) * 1000).toISOString());
  });
});
