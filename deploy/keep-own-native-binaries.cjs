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
