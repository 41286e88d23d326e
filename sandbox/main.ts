import { createProgram, EXIT_USAGE, parseAndRun, wholeNumber } from '../src/cli/command.js';
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

interface SandboxOptions {
  fixture?: string;
  host: string;
  compliancePort: number;
  accountingPort: number;
  seed?: number;
}

const port = (flag: string) => wholeNumber(flag, 65_535, 'must be a port number from 0 to 65535');

function banner(complianceUrl: string, accountingUrl: string, customFixture: boolean): string {
  const demo = customFixture ? ['  (custom fixture: the demo keys below apply only if it keeps the demo world)'] : [];
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

async function main(options: SandboxOptions): Promise<number> {
  const logger = createLogger({ name: 'sandbox' });
  let fixture: SandboxFixture | undefined;
  if (options.fixture !== undefined) {
    try {
      fixture = await loadFixture(options.fixture);
    } catch (err) {
      if (err instanceof FixtureError) {
        console.error(`Invalid sandbox fixture: ${err.message}`);
        return EXIT_USAGE;
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
    host: options.host,
    compliancePort: options.compliancePort,
    accountingPort: options.accountingPort,
    logger,
    ...(options.seed === undefined ? {} : { random: seededRandom(options.seed) }),
  });
  running.sandbox = sandbox;
  if (running.stopping) {
    await exitAfterClose(sandbox);
    return 0;
  }
  logger.info({ complianceUrl: sandbox.complianceUrl, accountingUrl: sandbox.accountingUrl }, 'sandbox listening');
  console.log(banner(sandbox.complianceUrl, sandbox.accountingUrl, fixture !== undefined));
  // Running until a signal stops it.
  return 0;
}

const program = createProgram(
  'npm run sandbox --',
  'Starts the compliance and accounting service sandboxes (docs/sandbox.md), until Ctrl+C.',
)
  .option('--fixture <path.json>', 'the world to serve (default: the demo world)')
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--compliance-port <port>', 'port of the compliance service', port('--compliance-port'), 4010)
  .option('--accounting-port <port>', 'port of the accounting service', port('--accounting-port'), 4020)
  .option('--seed <n>', "makes the fault rules' probability rolls reproducible", wholeNumber('--seed', 0xffff_ffff))
  .act<SandboxOptions>((_args, options) => main(options));

parseAndRun(program).then(
  // 0: running (or the help was printed); anything else: it did not start.
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    console.error('sandbox failed to start:', err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
