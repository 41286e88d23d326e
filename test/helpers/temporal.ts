import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { IllegalStateError } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogLevel } from '@temporalio/worker';
import { inject } from 'vitest';

const logLevels: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
const requestedLevel = logLevels.find((level) => level === process.env.TEMPORAL_TEST_LOG_LEVEL?.toUpperCase());

/** SDK and bundler logger for tests (TEMPORAL_TEST_LOG_LEVEL, default WARN): INFO buries failures under noise. */
export const testLogger = new DefaultLogger(requestedLevel ?? 'WARN');

let envPromise: Promise<TestWorkflowEnvironment> | undefined;

/** The environment connected to the run's shared server, created once per test file (each file is its own fork). */
export function getTestEnv(): Promise<TestWorkflowEnvironment> {
  if (envPromise === undefined) installQuietRuntime();
  envPromise ??= TestWorkflowEnvironment.createFromExistingServer({
    address: inject('temporalAddress'),
    namespace: inject('temporalNamespace'),
  });
  return envPromise;
}

/** Call from afterAll so the file's connections close before the fork exits. */
export async function closeTestEnv(): Promise<void> {
  const pending = envPromise;
  envPromise = undefined;
  if (pending) await (await pending).teardown();
}

/** Files share one server, so every test takes its own task queue to avoid stealing another's tasks. */
export function uniqueTaskQueue(prefix = 'test'): string {
  return `${prefix}-${randomUUID()}`;
}

function installQuietRuntime(): void {
  try {
    Runtime.install({ logger: testLogger });
  } catch (err) {
    // The file already used the SDK before asking for the env; keep its runtime.
    if (!(err instanceof IllegalStateError)) throw err;
  }
}
