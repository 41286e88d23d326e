/**
 * `npm start`: the whole stack until Ctrl+C: by default two merchants on two keys over the stack's own sandbox (a
 * tenants file it writes), or the environment's tenants file, or one key per service (stack-shape.ts).
 */
import { loadConfig } from '../../src/config/env.js';
import { createLogger } from '../../src/logger.js';
import { startStack, type Stack } from './stack.js';
import { createProgram, runProgram } from '../../src/cli/command.js';

/** Where the workers' calls go, a line each: the merchants and their businesses, the tenants file, or the two services. */
function servingLines(stack: Stack, config: ReturnType<typeof loadConfig>): string[] {
  if (stack.merchants) {
    const width = Math.max(...stack.merchants.map((m) => m.application.length));
    return [
      ...stack.merchants.map(
        (m) =>
          `  merchant        ${m.application.padEnd(width)}  ${m.businesses.join(', ')} (${m.serviceApplicationId}, ${m.requestsPerMinute}/min); books ${m.books.application}`,
      ),
      `  sandbox         compliance ${stack.sandbox?.complianceUrl ?? '?'}, accounting ${stack.sandbox?.accountingUrl ?? '?'}`,
      `  tenants file    ${stack.tenantsFile ?? '?'} (removed at stop; npm run tenants / check / reconcile read it with TENANTS_FILE=…)`,
    ];
  }
  if (stack.services) {
    return [
      `  compliance      ${stack.services.compliance.baseUrl}${config.compliance ? '' : ' (embedded sandbox)'}`,
      `  accounting      ${stack.services.accounting.baseUrl}${config.accounting ? '' : ' (embedded sandbox)'}`,
    ];
  }
  return [`  tenants         ${stack.tenantsFile ?? '?'} (npm run tenants lists them)`];
}

async function main(): Promise<number> {
  const config = loadConfig(process.env);
  const logger = createLogger({ level: config.logLevel, name: 'stack' });
  const stack = await startStack({ env: process.env, logger });
  const webhooks =
    stack.webhooksReceived.length > 0 ? `, accounting webhooks of ${stack.webhooksReceived.join(', ')}` : '';
  console.log(`
eTIMS sale worker is running
  Temporal        ${stack.temporalAddress} (namespace ${stack.namespace})
  Temporal UI     ${stack.uiUrl ?? '(server not started here)'}
${servingLines(stack, config).join('\n')}
  callbacks       ${stack.worker.callbacks ? `${stack.worker.callbacks.url}${webhooks}` : 'none (polling only)'}
  codec server    ${stack.codecUrl ?? 'none'}
  metrics         worker ${stack.settings.worker.metricsBindAddress ? `http://${stack.settings.worker.metricsBindAddress}/metrics` : 'off (set METRICS_BIND_ADDRESS)'}, Temporal ${stack.temporalMetricsUrl ?? '(server not started here)'}${
    stack.payloadKeysFile
      ? `
  payload key     ${stack.payloadKeysFile} (the sales CLI needs it: export PAYLOAD_KEYS_FILE=${stack.payloadKeysFile})`
      : ''
  }
Start a sale:     ${stack.payloadKeysFile ? `PAYLOAD_KEYS_FILE=${stack.payloadKeysFile} ` : ''}npm run sales -- start examples/sale.json
Press Ctrl+C to stop.
`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'stopping');
      void stack.stop();
    });
  }
  await stack.running;
  await stack.stop();
  return 0;
}

runProgram(
  createProgram(
    'npm start --',
    'The whole stack until Ctrl+C: Temporal dev server and UI, a sandbox with two merchants on two keys (or TENANTS_FILE; or, with any single-key setting such as SANDBOX=embedded, one key per service), callback receiver, workers and codec server (README.md).',
  ).act(main),
);
