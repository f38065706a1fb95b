// Public surface of the Redfish client. Controllers import from here only.
export * from './errors.js';
export type * from './types.js';
export { Transport, type TlsOptions, type TransportOptions } from './transport.js';
export type { Credentials, AuthMode } from './session.js';
export { RedfishClient, parseRetryAfter, type RedfishClientOptions, type RedfishResponse } from './client.js';
export * from './navigation.js';
export * from './writes.js';
export * from './tasks.js';
export { Bmc, connectBmc, type ConnectOptions } from './bmc.js';
export * from './power.js';
export * from './boot.js';
export * from './virtual-media.js';
export * from './settings.js';
export * from './bios.js';
export * from './registry.js';
export * from './manager.js';
export * from './update.js';
export * from './vendors.js';
