/**
 * Resolves once everything written to standard output and standard error so
 * far has left the process (or the reader is gone). Node writes to a pipe
 * asynchronously: what the kernel's pipe buffer (64 KiB on Linux) cannot take
 * at once waits in the process, and `process.exit` drops it. oclif waits for
 * standard output after a command that returns, not after one that exits
 * with a status (its exit error goes straight to process.exit), so a JSON
 * report larger than the pipe buffer reached `… --json | jq` cut short
 * exactly when the exit status said something was wrong. Files and
 * terminals are written synchronously and have nothing pending.
 */
export async function outputDrained(): Promise<void> {
  await Promise.all([process.stdout, process.stderr].map(drained));
}

function drained(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded || stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    // A reader that went away (EPIPE) ends the wait as surely as one that read everything.
    stream.on('error', done);
    stream.on('close', done);
    // Writes complete in order: an empty one's callback runs once everything before it is out.
    stream.write('', done);
  });
}
