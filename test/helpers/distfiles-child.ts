/**
 * A separate process running the real distfile engine, for tests of what
 * happens between processes (a kill -9, two runs sharing a distdir). argv[2]
 * is JSON `{ needs, options }`; progress goes to stderr as in a non-TTY run,
 * the results to stdout as JSON. Exit 0 when every file is fetched or present,
 * 5 (download failed) otherwise, as the commands do.
 */
import { createProgress, ensureDistfiles, type DistfileNeed, type EnsureOptions } from '../../src/distfiles/index.js';

const { needs, options } = JSON.parse(process.argv[2]!) as { needs: DistfileNeed[]; options: EnsureOptions };
const results = await ensureDistfiles(needs, { ...options, progress: createProgress({ stream: process.stderr, tty: false }) });
process.stdout.write(JSON.stringify(results));
process.exitCode = results.every((r) => r.status === 'fetched' || r.status === 'present') ? 0 : 5;
