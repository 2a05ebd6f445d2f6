/**
 * What the hash pool and its workers say to each other, and the stat stamp
 * the hash cache keys on. Stamps are strings of bigints: nanosecond times and
 * 64-bit inode numbers do not fit a double.
 */
export interface FileStamp {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

export interface HashJob {
  id: number;
  path: string;
}

export type HashReply =
  | {
      id: number;
      ok: true;
      size: number;
      blake2b: string;
      sha512: string;
      /** fstat of the descriptor that was read, identical before and after the read. */
      stamp: FileStamp;
      /** Wall clock (ms) just before the file was opened: the racy-timestamp reference. */
      readStartMs: number;
    }
  | { id: number; ok: false; message: string; code?: string };

export type HashOutcome = Omit<Extract<HashReply, { ok: true }>, 'id' | 'ok'>;
