/**
 * The plain overlay names a build in three places: the image tag, and build.yaml's build id and name. Changed apart,
 * new code would run under an old build's id (workflows pinned to that build replayed on code they did not start on),
 * so they must say the same build. At run time the worker refuses a build id of this form that names another commit
 * than its image's BUILD_COMMIT (src/config/versioning.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(`${root}/${path}`, 'utf8');
/** The first `key: value` after the line `after` matches: both files are that simple. */
const field = (text: string, after: RegExp, key: string) => {
  const from = text.search(after);
  const match = new RegExp(`^\\s*-?\\s*${key}: *"?([^"\\s]+)"?\\s*$`, 'm').exec(text.slice(from));
  return match?.[1] ?? '';
};

describe('the plain overlay names one build', () => {
  it('in its image tag, its build id and its name', () => {
    const overlay = read('deploy/kubernetes/overlays/production-plain/kustomization.yaml');
    const build = read('deploy/kubernetes/overlays/production-plain/build.yaml');
    const tag = field(overlay, /- name: etims-temporal-worker\n/, 'newTag');
    const buildId = field(build, /^data:/m, 'buildId');
    const name = field(build, /^data:/m, 'name');
    // The image is tagged <release>-<commit>; the build id is <release>+<commit>, as the image derives it.
    const tagged = /^(\d+\.\d+\.\d+)-([0-9a-f]{7,40})$/.exec(tag);
    expect(tagged, `image tag ${tag} is <release>-<commit>`).not.toBeNull();
    expect(buildId).toBe(`${tagged![1]}+${tagged![2]}`);
    expect(name).toBe(buildId.replace(/[.+]/g, '-'));
  });
});
