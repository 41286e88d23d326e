// Why: docs/benchmarks.md, "Stack traces of workflow promises".
Error.stackTraceLimit = 5;
