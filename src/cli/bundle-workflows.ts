/** `npm run build`'s last step: the workflow bundles the compiled worker loads (dist/workflow-bundles). */
import { createLogger } from '../logger.js';
import { writePrebuiltBundles } from '../temporal/workflow-bundle.js';

const logger = createLogger({ level: 'warn', name: 'bundle-workflows' });
const manifest = await writePrebuiltBundles(logger);
const sizes = Object.entries(manifest.bundles).map(([variant, b]) => `${variant} ${(b.bytes / 2 ** 20).toFixed(1)} MB`);
console.log(`workflow bundles written to dist/workflow-bundles (${sizes.join(', ')}; inputs ${manifest.inputs})`);
