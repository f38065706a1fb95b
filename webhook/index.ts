// The webhook's public surface, for the wiring step (binary entry point, informer-backed WorldView,
// API-server BudgetStore).
export * from './admission.js';
export * from '../contract/codes.js';
export * from '../contract/denial.js';
export * from './grants.js';
export * from './memory-world.js';
export * from './memory-budget-store.js';
export * from './metrics.js';
export * from './review.js';
export * from '../contract/selectors.js';
export * from './server.js';
export * from '../contract/taints.js';
export * from './tls.js';
export * from './world.js';
export type { RuleInput, Rule, PolicyConfigMapRef } from './rules/common.js';
