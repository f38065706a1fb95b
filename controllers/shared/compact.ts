// Objects without their undefined fields: what server-side apply must see (an explicit null or an
// undefined that serialises away would otherwise read as "set" or as a field we own).

/** A copy of `o` without the keys whose value is undefined. */
export function compact<T extends Record<string, unknown>>(
  o: T,
): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}
