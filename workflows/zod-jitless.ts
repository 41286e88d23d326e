import { z } from 'zod';

// Every workflow evaluates its own copy of the schemas, so zod's compiled parsers (one `new Function` per object
// schema, made on its first parse) would be compiled again for each workflow: far dearer than the interpreted parse of
// the one input a workflow checks. Imported first by workflows/index.ts, before any schema is built.
z.config({ jitless: true });
