// The SDK captures a stack trace for every promise a workflow makes (for the stack trace query), source-mapping each
// frame: with V8's default 10 frames that was a fifth of a replayed sale's CPU, and 5 frames keep where it waits.
Error.stackTraceLimit = 5;
