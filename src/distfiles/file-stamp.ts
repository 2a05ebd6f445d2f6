import type { BigIntStats } from 'node:fs';
import type { FileStamp } from './hash-protocol.js';

export function stampOf(st: BigIntStats): FileStamp {
  return {
    dev: st.dev.toString(),
    ino: st.ino.toString(),
    size: st.size.toString(),
    mtimeNs: st.mtimeNs.toString(),
    ctimeNs: st.ctimeNs.toString(),
  };
}

/** Same file, same bytes as far as stat can tell, ignoring ctime (which our own rename moves). */
export function sameContentStamp(a: FileStamp, b: FileStamp): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}
