/** Which Worker Deployment Version this process is: docs/deployment.md, "Rolling out a new build". */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, type Env } from './env.js';

export interface VersioningSettings {
  /** Absent: derived from the fleet's workflow queue (`deploymentNameFor`). */
  deploymentName: string | undefined;
  buildId: string;
  /**
   * Set this version current when it is neither current nor ramping (`true`: the local stack and the tests), or only
   * when its deployment has no current version at all (`first`, the default: a first deployment just works; a later
   * build waits for the operator or the controller).
   */
  makeCurrent: boolean | 'first';
  /** With makeCurrent, even when it was current before and another has been since: a stack running one build. */
  rollBack?: boolean;
}

/** What every worker of this process polls as. */
export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

const PACKAGE_NAME = 'etims-temporal-worker';
// The server keeps a version's id within its ID length limit (1000 by default) with room for both halves.
const MAX_LENGTH = 255;

/**
 * The variable names are the ones Temporal's worker controller sets on the pods it runs, so a fleet it manages needs
 * nothing more. The build id is never empty: two builds sharing one would replay each other's histories.
 */
export function loadVersioningSettings(env: Env): VersioningSettings {
  const deploymentName = env.TEMPORAL_DEPLOYMENT_NAME?.trim() || undefined;
  if (deploymentName !== undefined) checkDeploymentName('TEMPORAL_DEPLOYMENT_NAME', deploymentName);
  const buildId = env.TEMPORAL_WORKER_BUILD_ID?.trim() || derivedBuildId(env.BUILD_COMMIT?.trim() || gitCommit());
  checkBuildId(env.TEMPORAL_WORKER_BUILD_ID?.trim() ? 'TEMPORAL_WORKER_BUILD_ID' : 'the derived build id', buildId);
  checkBuildOfImage(env.TEMPORAL_WORKER_BUILD_ID?.trim(), env.BUILD_COMMIT?.trim());
  const makeCurrent = env.WORKER_MAKE_CURRENT?.trim().toLowerCase() ?? '';
  if (!['', 'first', 'true', 'false', 'always'].includes(makeCurrent))
    throw new ConfigError(
      `WORKER_MAKE_CURRENT: must be first, true, false or always, not "${env.WORKER_MAKE_CURRENT}"`,
    );
  return {
    deploymentName,
    buildId,
    makeCurrent:
      makeCurrent === '' || makeCurrent === 'first' ? 'first' : makeCurrent === 'true' || makeCurrent === 'always',
    ...(makeCurrent === 'always' ? { rollBack: true } : {}),
  };
}

/** One deployment per fleet, and a fleet is its workflow queue; the server refuses `.` and `:` in the name. */
export function deploymentNameFor(taskQueue: string): string {
  return `etims-${taskQueue}`.replace(/[.:]/g, '-');
}

export function deploymentVersionOf(settings: VersioningSettings, taskQueue: string): DeploymentVersion {
  return { deploymentName: settings.deploymentName ?? deploymentNameFor(taskQueue), buildId: settings.buildId };
}

/** The release and the commit it was built from, e.g. `2.0.0+1a2b3c4d5e6f`. */
export function derivedBuildId(commit: string | undefined): string {
  const version = packageVersion();
  if (!commit) {
    throw new ConfigError(
      'TEMPORAL_WORKER_BUILD_ID is not set and the commit is unknown (no BUILD_COMMIT, no git checkout): ' +
        'build the image with --build-arg BUILD_COMMIT=$(git rev-parse --short=12 HEAD), or set ' +
        `TEMPORAL_WORKER_BUILD_ID (e.g. ${version}+<commit>)`,
    );
  }
  return `${version}+${commit}`;
}

function checkDeploymentName(variable: string, name: string): void {
  if (/[.:]/.test(name) || name.startsWith('__') || name.length > MAX_LENGTH)
    throw new ConfigError(
      `${variable}: "${name}" must not contain "." or ":", start with "__" or exceed ${MAX_LENGTH} characters`,
    );
}

function checkBuildId(what: string, buildId: string): void {
  if (buildId.startsWith('__') || buildId.length > MAX_LENGTH || /\s/.test(buildId))
    throw new ConfigError(
      `${what}: "${buildId}" must not start with "__", contain spaces or exceed ${MAX_LENGTH} characters`,
    );
}

/**
 * A build id of the project's own form (`<release>+<commit>`) given beside the commit the image was built from must
 * name that commit: a manifest whose build id was not changed with its image would run new code under an old build's
 * id, replaying workflows pinned to that build on code they did not start on. Ids of another form (the worker
 * controller's) are the deployer's to keep.
 */
function checkBuildOfImage(given: string | undefined, imageCommit: string | undefined): void {
  const own = given && /^\d+\.\d+\.\d+(?:-[\w.]+)?\+([0-9a-f]{7,40})$/.exec(given);
  if (!own || !imageCommit) return;
  const named = own[1]!;
  if (!named.startsWith(imageCommit) && !imageCommit.startsWith(named))
    throw new ConfigError(
      `TEMPORAL_WORKER_BUILD_ID: "${given}" names commit ${named}, but this image was built from ${imageCommit} ` +
        '(BUILD_COMMIT): change the build id with the image (overlays/production-plain/build.yaml), or leave it ' +
        'unset for the image to derive it',
    );
}

/** The project's root: two folders up under tsx (src/config), three in a build (dist/src/config). */
function projectRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const candidate = fileURLToPath(new URL(`${up}/`, `file://${here}/`));
    const file = `${candidate}package.json`;
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === PACKAGE_NAME)
      return candidate;
  }
  throw new ConfigError(`no package.json of ${PACKAGE_NAME} above ${here}: set TEMPORAL_WORKER_BUILD_ID`);
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(`${projectRoot()}package.json`, 'utf8')) as { version: string }).version;
}

/** Undefined without git or outside a checkout (the production image has neither). */
function gitCommit(): string | undefined {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: projectRoot(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5_000,
    }).trim();
    return /^[0-9a-f]{7,40}$/.test(commit) ? commit : undefined;
  } catch {
    return undefined;
  }
}
