import { parseArgs } from 'node:util';
import { createLogger } from '../src/logger.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
} from './accounting/default-fixture.js';
import { DEMO } from './default-fixture.js';
import { FixtureError, loadFixture, type SandboxFixture } from './fixture.js';
import { startSandbox, type Sandbox } from './server.js';
import { seededRandom } from './shared/faults.js';

const USAGE = `Usage: npm run sandbox -- [--fixture path.json] [--host 127.0.0.1] [--compliance-port 4010] [--accounting-port 4020] [--seed N]

Starts the compliance and accounting service sandboxes (see docs/sandbox.md). --seed makes the fault rules'
probability rolls reproducible.`;

const EXIT_USAGE = 2;

function port(value: string, option: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65_535) {
    console.error(`--${option} must be a port number from 0 to 65535, got ${JSON.stringify(value)}`);
    process.exit(EXIT_USAGE);
  }
  return Number(value);
}

function seed(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 0xffff_ffff) {
    console.error(`--seed must be an integer from 0 to 4294967295, got ${JSON.stringify(value)}`);
    process.exit(EXIT_USAGE);
  }
  return Number(value);
}

function banner(complianceUrl: string, accountingUrl: string, customFixture: boolean): string {
  const demo = customFixture
    ? ['  (custom fixture: the demo keys below apply only if it keeps the demo world)']
    : [];
  return [
    '',
    'eTIMS sandbox is running',
    `  compliance  ${complianceUrl}   (API /v1, inspection ${complianceUrl}/__sandbox)`,
    `  accounting  ${accountingUrl}   (inspection ${accountingUrl}/__sandbox)`,
    '',
    ...demo,
    'Compliance demo keys (sandbox only):',
    `  organisation-wide, all scopes   ${DEMO.keys.orgWide}   (send businessId=${DEMO.businesses.nairobi})`,
    `  bound to ${DEMO.businesses.nairobi}   ${DEMO.keys.nairobi}`,
    `  sales:read only                 ${DEMO.keys.readOnly}`,
    `  bound to ${DEMO.businesses.mombasa}   ${DEMO.keys.mombasa}`,
    `  live (production business)      ${DEMO.keys.live}`,
    `  revoked / suspended             ${DEMO.keys.revoked} / ${DEMO.keys.suspended}`,
    '  trader invoice numbers: ASYNC-… completes later, ASYNCFAIL-… fails later, REJECT-… is refused,',
    '  FLAKY-… is refused once then succeeds on retry, SLOW-… takes 2 s',
    '',
    'Accounting demo credentials (sandbox only):',
    `  X-API-Key ${DEMO_ACCOUNTING_API_KEY}`,
    `  client secret ${DEMO_ACCOUNTING_CLIENT_SECRET}`,
    `  webhook secret ${DEMO_ACCOUNTING_WEBHOOK_SECRET}`,
    '',
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  let values: { fixture?: string; host?: string; 'compliance-port'?: string; 'accounting-port'?: string; seed?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        fixture: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        'compliance-port': { type: 'string', default: '4010' },
        'accounting-port': { type: 'string', default: '4020' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    process.exit(EXIT_USAGE);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }

  const logger = createLogger({ name: 'sandbox' });
  let fixture: SandboxFixture | undefined;
  if (values.fixture !== undefined) {
    try {
      fixture = await loadFixture(values.fixture);
    } catch (err) {
      if (err instanceof FixtureError) {
        console.error(`Invalid sandbox fixture: ${err.message}`);
        process.exit(EXIT_USAGE);
      }
      throw err;
    }
  }

  // Handlers first: a signal that arrives while starting, or right after the banner, must still stop cleanly.
  const running: { sandbox?: Sandbox; stopping: boolean } = { stopping: false };
  const exitAfterClose = (sandbox: Sandbox) =>
    sandbox.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'sandbox did not stop cleanly');
        process.exit(1);
      },
    );
  const stop = (signal: NodeJS.Signals) => {
    if (running.stopping) return;
    running.stopping = true;
    logger.info({ signal }, 'sandbox stopping');
    // Still starting: main() closes it as soon as it is up.
    if (running.sandbox) void exitAfterClose(running.sandbox);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const sandbox = await startSandbox({
    ...(fixture ? { fixture } : {}),
    host: values.host ?? '127.0.0.1',
    compliancePort: port(values['compliance-port'] ?? '4010', 'compliance-port'),
    accountingPort: port(values['accounting-port'] ?? '4020', 'accounting-port'),
    logger,
    ...(values.seed === undefined ? {} : { random: seededRandom(seed(values.seed)) }),
  });
  running.sandbox = sandbox;
  if (running.stopping) {
    await exitAfterClose(sandbox);
    return;
  }
  logger.info({ complianceUrl: sandbox.complianceUrl, accountingUrl: sandbox.accountingUrl }, 'sandbox listening');
  console.log(banner(sandbox.complianceUrl, sandbox.accountingUrl, fixture !== undefined));
}

main().catch((err: unknown) => {
  console.error('sandbox failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
