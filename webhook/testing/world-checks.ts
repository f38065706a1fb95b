// Comparisons the InformerWorld tests make between two WorldViews' answers.
import { expect } from '@jest/globals';
import type { KubeObject } from '../../api/schema/meta.js';
import { objectKey } from '../../lib/kube/resources.js';
import type { BudgetCensus } from '../world.js';

/** The objects' keys, sorted: answers compared as sets. */
export const keys = (objs: readonly KubeObject[]) => objs.map((o) => objectKey(o.metadata)).sort();

/** A census in comparable form; a set, when given, must hold exactly the listed names. */
export const census = (c: BudgetCensus) => {
  if (c.unavailableSet) expect([...c.unavailableSet].sort()).toEqual([...new Set(c.unavailable)].sort());
  return { expected: c.expected, unavailable: [...c.unavailable].sort() };
};
