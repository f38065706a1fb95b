export * from './types.js';
export * from './common.js';
export * from './meta.js';
export * from './kind.js';
export * from './bounds.js';
