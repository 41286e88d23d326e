/**
 * The image's build step after the compiled code is in place: loads what a worker's start loads, with
 * NODE_COMPILE_CACHE set, so that directory holds V8's code for each module and every start reads it instead of
 * compiling them again (docs/deployment.md, "The production image"). Nothing is started, and no configuration read.
 */
import { readdirSync } from 'node:fs';
import { flushCompileCache, getCompileCacheDir } from 'node:module';

const dir = getCompileCacheDir();
if (dir === undefined) {
  console.error('NODE_COMPILE_CACHE is not set (or the directory cannot be written): nothing to fill');
  process.exit(2);
}
await import('../worker/process.js');
// A worker with a callback receiver loads its HTTP framework when the receiver starts.
await import('../callbacks/server.js');
flushCompileCache();
console.log(`compile cache: ${readdirSync(dir, { recursive: true }).length} entries in ${dir}`);
