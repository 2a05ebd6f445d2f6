/**
 * Apply `overrides[].set` to a component: objects merge key by key, lists and
 * scalars replace, `null` removes (RFC 7396 merge-patch semantics). Alongside
 * the result it records where each replaced value came from, so an error in a
 * resolved component still points at the line the user wrote.
 */

export type Segments = (string | number)[];

export interface Provenance {
  /** Map a path in the resolved value to the path in the source document. */
  sourcePath(path: readonly (string | number)[]): Segments;
}

type Json = unknown;

function isPlainObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function mergeWithProvenance(
  base: Json,
  patches: { value: Json; at: Segments }[],
): { value: Json; provenance: Provenance } {
  const origins = new Map<string, Segments>();
  let value = structuredClone(base);
  for (const patch of patches) value = mergeInto(value, patch.value, [], patch.at, origins);
  return {
    value,
    provenance: {
      sourcePath(path) {
        for (let n = path.length; n > 0; n--) {
          const origin = origins.get(key(path.slice(0, n)));
          if (origin) return [...origin, ...path.slice(n)];
        }
        return [...path];
      },
    },
  };
}

function key(path: readonly (string | number)[]): string {
  return JSON.stringify(path);
}

function forget(origins: Map<string, Segments>, path: Segments): void {
  const prefix = key(path).slice(0, -1);
  for (const k of [...origins.keys()]) if (k === key(path) || k.startsWith(`${prefix},`)) origins.delete(k);
}

function mergeInto(target: Json, patch: Json, path: Segments, at: Segments, origins: Map<string, Segments>): Json {
  if (!isPlainObject(patch) || !isPlainObject(target)) {
    forget(origins, path);
    if (path.length > 0) origins.set(key(path), at);
    return structuredClone(patch);
  }
  const out: Record<string, Json> = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    const p = [...path, k];
    if (v === null) {
      delete out[k];
      forget(origins, p);
    } else if (isPlainObject(v) && isPlainObject(out[k])) {
      out[k] = mergeInto(out[k], v, p, [...at, k], origins);
    } else {
      forget(origins, p);
      origins.set(key(p), [...at, k]);
      out[k] = structuredClone(v);
    }
  }
  return out;
}
