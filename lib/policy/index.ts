export * from './parse.js';
export * from './store.js';
export * from './window.js';
export * from './durations.js';
export * from './feed.js';
