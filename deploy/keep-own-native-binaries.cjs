// The Temporal core bridge ships its native library for every platform it supports (about 110 MB of other
// platforms' binaries); an image runs on one. Run after `npm ci` in the image's own platform.
const fs = require('node:fs');
const path = require('node:path');
const { getPrebuiltTargetName } = require('@temporalio/core-bridge/common');

const releases = path.join(path.dirname(require.resolve('@temporalio/core-bridge/common')), 'releases');
const own = getPrebuiltTargetName();
if (!fs.existsSync(path.join(releases, own, 'index.node'))) {
  console.error(`no Temporal core bridge binary for ${own} in ${releases}`);
  process.exit(1);
}
for (const target of fs.readdirSync(releases)) {
  if (target !== own) fs.rmSync(path.join(releases, target), { recursive: true, force: true });
}
console.log(`Temporal core bridge: kept ${own} only`);

// npm ci --omit=dev still installs the optional dependencies, among them the development Node (about 190 MB, for
// npm's scripts as node_modules/.bin/node): the image runs its base image's node.
const modules = path.join(__dirname, 'node_modules');
for (const name of Object.keys(require('./package.json').optionalDependencies ?? {})) {
  const dir = path.join(modules, name);
  if (!fs.existsSync(dir) || !require(path.join(dir, 'package.json')).bin?.node) continue;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(path.join(modules, '.bin', 'node'), { force: true });
  console.log(`${name}: removed (the image runs its own node)`);
}
