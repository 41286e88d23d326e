import { z } from 'zod';

// A workflow parses one input and a few update arguments: zod's interpreted parse costs no more than its compiled one
// (measured on a replayed sale), and keeps generated code out of the workflow sandbox. Imported first by
// workflows/index.ts and shared first by the worker, before any schema is built.
z.config({ jitless: true });
