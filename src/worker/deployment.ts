/** Where this process's Worker Deployment Version stands: docs/deployment.md, "Rolling out a new build". */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { DeploymentVersion } from '../config/versioning.js';
import { GRPC } from '../temporal/connection.js';
import type { WorkerContext } from './workers.js';

/** `made-current`: it was neither and this process set it current; `inactive`: new workflows do not come to it. */
export type VersionRouting = 'current' | 'ramping' | 'made-current' | 'inactive';

const VersionStatus = proto.temporal.api.enums.v1.WorkerDeploymentVersionStatus;

/** The server learns a version and its queues from the workers' polls, a moment after they begin. */
const REGISTRATION_WAIT_MS = 30_000;
const RETRY_MS = 250;
/** After registration: how long setting it current may take while other processes change the routing too. */
const SETTLE_MS = 15_000;

/** What an operator runs to send new workflows to `version`: all of them, or a share first. */
export function versionCommands(version: DeploymentVersion, namespace: string): { current: string; ramp: string } {
  const target =
    `--deployment-name ${version.deploymentName} --build-id ${version.buildId}` +
    (namespace === 'default' ? '' : ` --namespace ${namespace}`);
  return {
    current: `temporal worker deployment set-current-version ${target}`,
    ramp: `temporal worker deployment set-ramping-version ${target} --percentage 10`,
  };
}

/**
 * Once the server knows the version with each of `taskQueues`: says whether new workflows come to it, or makes it
 * current when `makeCurrent` asks. A version that is neither current nor ramping runs only the workflows pinned to
 * it (none, for a new build), so that is said once, loudly, with the command that changes it.
 */
export async function routeDeploymentVersion(
  options: Pick<WorkerContext, 'client' | 'namespace' | 'version' | 'logger'> & {
    taskQueues: readonly string[];
    /** `first`: only while the deployment has no current version and no unversioned worker polls its queues. */
    makeCurrent: boolean | 'first';
    /** With makeCurrent, even a build that was current before (WORKER_MAKE_CURRENT=always). */
    rollBack?: boolean;
    registrationWaitMs?: number;
    /** The process is stopping: nothing more to tell. */
    signal?: AbortSignal;
  },
): Promise<VersionRouting> {
  const { client, namespace, version, logger, signal } = options;
  const pause = () => sleep(RETRY_MS, undefined, { signal });
  const service = client.workflowService;
  const fields = { deploymentName: version.deploymentName, buildId: version.buildId };
  const deadline = Date.now() + (options.registrationWaitMs ?? REGISTRATION_WAIT_MS);
  const unregistered = async () => {
    try {
      const described = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: version });
      const known = new Set((described.workerDeploymentVersionInfo?.taskQueueInfos ?? []).map((q) => q.name));
      return options.taskQueues.filter((queue) => !known.has(queue));
    } catch (err) {
      if (grpcCode(err) === GRPC.NOT_FOUND) return [...options.taskQueues];
      throw err;
    }
  };
  const wasCurrentBefore = async () => {
    const described = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: version });
    const status = described.workerDeploymentVersionInfo?.status;
    return (
      status === VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING ||
      status === VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED
    );
  };
  const inactive = (extra: Record<string, unknown>, message: string): VersionRouting => {
    logger.warn({ ...fields, ...extra }, message);
    return 'inactive';
  };
  let missing = await unregistered();
  while (missing.length > 0 && Date.now() < deadline) {
    await pause();
    missing = await unregistered();
  }
  if (missing.length > 0) logger.warn({ ...fields, missing }, 'the server has not registered these queues yet');

  const settleBy = Date.now() + SETTLE_MS;
  for (;;) {
    const described = await service
      .describeWorkerDeployment({ namespace, deploymentName: version.deploymentName })
      .catch((err: unknown) => {
        if (grpcCode(err) === GRPC.NOT_FOUND && Date.now() < settleBy) return undefined;
        throw err;
      });
    if (described === undefined) {
      await pause();
      continue;
    }
    const routing = described.workerDeploymentInfo?.routingConfig;
    const current = routing?.currentDeploymentVersion?.buildId || undefined;
    const ramping = routing?.rampingDeploymentVersion?.buildId || undefined;
    if (current === version.buildId) {
      logger.info(fields, 'this build is the current version of its deployment: new workflows start on it');
      return 'current';
    }
    if (ramping === version.buildId) {
      const percentage = routing?.rampingVersionPercentage ?? 0;
      logger.info({ ...fields, current, percentage }, 'this build is the ramping version: a share of new workflows');
      return 'ramping';
    }
    const commands = versionCommands(version, namespace);
    // A deployment with a version current or ramping has an operator (or the controller) deciding: a later build waits.
    const first = options.makeCurrent === 'first';
    const neither = { current: current ?? 'none', makeCurrent: commands.current, rampInstead: commands.ramp };
    if (first && (current !== undefined || ramping !== undefined))
      return inactive(
        neither,
        `this build is neither the current nor the ramping version of its deployment (${current ?? ramping} is), ` +
          'so no new workflow starts on it until it is made current: ' +
          `\`${commands.current}\` (or ramp it: \`${commands.ramp}\`), or start it with WORKER_MAKE_CURRENT=true`,
      );
    // Unversioned workers on these queues run open workflows that a current version would take over and replay on
    // this code: docs/deployment.md, "From a fleet that ran without versioning".
    const unversioned = first ? await unversionedPollers(client, namespace, options.taskQueues) : [];
    if (unversioned.length > 0)
      return inactive(
        { unversionedPollers: unversioned.slice(0, 5), makeCurrent: commands.current },
        'this build is the first of its deployment, but workers without versioning poll its queues (a fleet from ' +
          'before versioning?): it does not make itself current, which would move their open workflows onto this ' +
          `code; run that fleet on a queue of its own, or make this build current yourself: \`${commands.current}\``,
      );
    if (!options.makeCurrent)
      return inactive(
        neither,
        'this build is neither the current nor the ramping version of its deployment, so no new workflow starts ' +
          `on it: make it current with \`${commands.current}\` (or ramp it: \`${commands.ramp}\`), ` +
          'or start it with WORKER_MAKE_CURRENT=true',
      );
    // An older build's process restarting after a newer one was made current (its version draining or drained) must
    // not take new work back: a rollback is an operator's decision, made with the same command.
    if (!options.rollBack && current !== undefined && (await wasCurrentBefore()))
      return inactive(
        { current, rollBack: commands.current },
        `this build was current before ${current} was made current, and WORKER_MAKE_CURRENT does not roll back: ` +
          `it runs the workflows pinned to it; to roll back to it, run \`${commands.current}\``,
      );
    try {
      await service.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        conflictToken: described.conflictToken,
        identity: client.options.identity,
      });
      logger.info(
        { ...fields, previous: current ?? 'none' },
        first
          ? 'this build made itself current: the first of its deployment (WORKER_MAKE_CURRENT=false waits for the ' +
              'operator instead); a later build waits for the operator or the worker controller'
          : 'this build made itself current (WORKER_MAKE_CURRENT)',
      );
      return 'made-current';
    } catch (err) {
      // Another process of the fleet changed the routing meanwhile, or the server is still registering pollers.
      if (Date.now() < settleBy) {
        await pause();
        continue;
      }
      if (!first) throw err;
      // Only a convenience: a deployment another manager owns (the worker controller) refuses it, and that is fine.
      return inactive(
        { err: err instanceof Error ? err.message : String(err), makeCurrent: commands.current },
        `this build, the first of its deployment, could not make itself current: \`${commands.current}\` does`,
      );
    }
  }
}

/** Identities of the workers polling `taskQueues` (workflow tasks) with no deployment: at most a few minutes old. */
async function unversionedPollers(client: Client, namespace: string, taskQueues: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const name of taskQueues) {
    const described = await client.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name, kind: proto.temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    for (const poller of described.pollers ?? [])
      if (!poller.deploymentOptions?.deploymentName) found.push(poller.identity ?? '?');
  }
  return found;
}

function grpcCode(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number'
    ? err.code
    : undefined;
}
