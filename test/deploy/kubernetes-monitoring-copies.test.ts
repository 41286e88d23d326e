/**
 * Kustomize reads only files inside a kustomization's directory, so the Kubernetes overlays carry generated copies
 * of the alert rules and the dashboard: they must be what deploy/prometheus and deploy/grafana say (those are the
 * files promtool's and the dashboard's tests check).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const script = new URL('../../deploy/kubernetes/sync-from-deploy.sh', import.meta.url).pathname;

describe('deploy/kubernetes/components/monitoring', () => {
  it('holds the alert rules and the dashboard of deploy/prometheus and deploy/grafana, unchanged', async () => {
    const { stdout } = await promisify(execFile)('sh', [script, '--check']);
    expect(stdout).toContain('in sync');
  });
});
