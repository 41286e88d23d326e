/**
 * The plain overlay names a build in three places: the image tag, and build.yaml's build id and name. Changed apart,
 * new code would run under an old build's id (workflows pinned to that build replayed on code they did not start on),
 * so they must say the same build. At run time the worker refuses a build id of this form that names another commit
 * than its image's BUILD_COMMIT (src/config/versioning.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => load(readFileSync(`${root}/${path}`, 'utf8')) as Record<string, unknown>;

describe('the plain overlay names one build', () => {
  it('in its image tag, its build id and its name', () => {
    const overlay = read('deploy/kubernetes/overlays/production-plain/kustomization.yaml') as {
      images: Array<{ name: string; newTag?: string }>;
    };
    const build = read('deploy/kubernetes/overlays/production-plain/build.yaml') as {
      data: { buildId: string; name: string };
    };
    const tag = overlay.images.find((image) => image.name === 'etims-temporal-worker')?.newTag ?? '';
    // The image is tagged <release>-<commit>; the build id is <release>+<commit>, as the image derives it.
    const tagged = /^(\d+\.\d+\.\d+)-([0-9a-f]{7,40})$/.exec(tag);
    expect(tagged, `image tag ${tag} is <release>-<commit>`).not.toBeNull();
    expect(build.data.buildId).toBe(`${tagged![1]}+${tagged![2]}`);
    expect(build.data.name).toBe(build.data.buildId.replace(/[.+]/g, '-'));
  });
});
