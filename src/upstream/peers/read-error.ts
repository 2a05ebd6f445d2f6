/**
 * A peer's recipe that cannot be read at all: not the language it claims to
 * be, or nested deeper than a recipe ever is (a hostile file trying to
 * exhaust the reader). Names the file, line and column; the command stops
 * before anything is written.
 */
export class PeerReadError extends Error {
  constructor(
    readonly why: string,
    readonly file: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${file}:${line}:${column}: ${why}`);
    this.name = 'PeerReadError';
  }
}
