export { ComplianceClient } from './client.js';
export * from './schemas.js';
