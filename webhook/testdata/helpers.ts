// Small builders shared by the webhook tests.
import { DEFAULT_POLICY, type Policy } from '../../policies/schema.js';
import type { AdmissionRequest } from '../admission.js';
import { MemoryWorld, type WorldContents } from '../testing/memory-world.js';
import type { RuleInput } from '../rules/common.js';
import { loadWorld, NOW } from './load.js';

export function ruleInput(
  request: AdmissionRequest,
  options: { world?: WorldContents; policy?: Policy; now?: Date } = {},
): RuleInput {
  return {
    request,
    world: new MemoryWorld(options.world ?? loadWorld()),
    policy: options.policy ?? DEFAULT_POLICY,
    now: options.now ?? NOW,
  };
}

export const clone = <T>(x: T): T => structuredClone(x);
