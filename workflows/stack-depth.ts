// The SDK captures a stack trace for every promise a workflow makes (for the stack trace query), source-mapping each
// frame: with V8's default 10 frames that was about a third of the workflow thread's time in a throughput run, and
// 5 frames still show where a workflow waits.
Error.stackTraceLimit = 5;
