// The failure converter of encrypted stacks: failure messages and stack traces go into the encoded attributes
// payload, which the payload codec then encrypts (by default they are plain text in the history).
// Plain CommonJS on purpose: the SDK loads it with require() in the worker and client (where no TypeScript loader
// may be registered) and bundles it into the workflow code. See failureConverterPath() in data-converter.ts.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
