import { z } from 'zod';

// Interpreted parsing costs a workflow no more than compiled (measured) and keeps generated code out of the sandbox.
// Imported first (workflows/index.ts, the worker's shared modules), before any schema is built.
z.config({ jitless: true });
