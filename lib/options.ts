/**
 * Fills in defaults for options left out or passed as undefined. (`{...defaults, ...options}`
 * would let an explicit `undefined` erase a default.)
 */
export function withDefaults<D extends object, O extends object>(defaults: D, options: O): D & O {
  const out: Record<string, unknown> = { ...(defaults as Record<string, unknown>) };
  for (const [k, v] of Object.entries(options)) if (v !== undefined) out[k] = v;
  return out as D & O;
}
