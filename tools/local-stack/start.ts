/** `npm start`: the whole stack on embedded defaults (or whatever is configured), until Ctrl+C. */
import { loadConfig } from '../../src/config/env.js';
import { createLogger } from '../../src/logger.js';
import { startStack } from './stack.js';
import { createProgram, runProgram } from '../../src/cli/command.js';

async function main(): Promise<number> {
  const config = loadConfig(process.env);
  const logger = createLogger({ level: config.logLevel, name: 'stack' });
  const stack = await startStack({ env: process.env, logger });
  console.log(`
eTIMS sale worker is running
  Temporal        ${stack.temporalAddress} (namespace ${stack.namespace})
  Temporal UI     ${stack.uiUrl ?? '(server not started here)'}
  compliance      ${stack.services.compliance.baseUrl}${config.compliance ? '' : ' (embedded sandbox)'}
  accounting      ${stack.services.accounting.baseUrl}${config.accounting ? '' : ' (embedded sandbox)'}
  callbacks       ${stack.worker.callbacks?.url ?? 'none (polling only)'}
  codec server    ${stack.codecUrl ?? 'none'}
  metrics         worker ${stack.settings.worker.metricsBindAddress ? `http://${stack.settings.worker.metricsBindAddress}/metrics` : 'off (set METRICS_BIND_ADDRESS)'}, Temporal ${stack.temporalMetricsUrl ?? '(server not started here)'}${stack.payloadKeysFile ? `
  payload key     ${stack.payloadKeysFile} (the sales CLI needs it: export PAYLOAD_KEYS_FILE=${stack.payloadKeysFile})` : ''}
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
    'The whole stack until Ctrl+C: Temporal dev server and UI, the embedded sandbox for any service not configured, callback receiver, workers and codec server (README.md).',
  ).act(main),
);
