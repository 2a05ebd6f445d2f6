/** The failure classes of a test run (schemas/test-report.schema.json). */
export type FailureClass = 'dependency' | 'fetch' | 'build' | 'test' | 'gpu-access' | 'oom' | 'timeout' | 'interrupted' | 'unknown';

/** What is known about one failed step when it is classified. */
export interface FailureEvidence {
  /** The script step: resolve, deps, atom, gpu. */
  step: string;
  /** Exit status of the command (null: not run). */
  status: number | null;
  /** The script saw its timeout expire. */
  timedOut: boolean;
  /** rocm-ebuild stopped the run (Ctrl-C, SIGTERM). */
  interrupted: boolean;
  /** The last ebuild phase that started ("compile", "test"…), if any. */
  phase?: string;
  /** Console lines of the step and the tail of the package's build log. */
  text: string;
}

export interface Classified {
  failureClass: FailureClass;
  /** One line saying what happened, taken from the evidence where possible. */
  message: string;
}

interface Rule {
  failureClass: FailureClass;
  pattern: RegExp;
  message: (m: RegExpExecArray) => string;
}

/** Why a dependency calculation fails, in Portage's words. */
const DEPENDENCY: Rule[] = [
  { failureClass: 'dependency', pattern: /The following REQUIRED_USE flag constraints are unsatisfied:\s*\n?\s*(.*)/, message: (m) => `REQUIRED_USE not satisfied: ${m[1]!.trim()}` },
  { failureClass: 'dependency', pattern: /The following USE changes are necessary to proceed:/, message: () => 'a USE dependency is not satisfied (Portage asks for USE changes)' },
  { failureClass: 'dependency', pattern: /All ebuilds that could satisfy "([^"]+)" have been masked/, message: (m) => `${m[1]} is masked` },
  { failureClass: 'dependency', pattern: /The following keyword changes are necessary to proceed:/, message: () => 'a dependency needs keyword changes (~amd64)' },
  { failureClass: 'dependency', pattern: /Multiple package instances within a single package slot|\[blocks B\s*\]|Blocked Packages|blocking each other/, message: () => 'packages block each other' },
  { failureClass: 'dependency', pattern: /there are no ebuilds (?:built with USE flags )?to satisfy "([^"]+)"/, message: (m) => `nothing satisfies ${m[1]}` },
  { failureClass: 'dependency', pattern: /emerge: there are no ebuilds to satisfy "([^"]+)"/, message: (m) => `nothing satisfies ${m[1]}` },
];

/** The GPU could not be used: the device nodes, their permissions, check_amdgpu, the runtime finding no GPU. */
const GPU: Rule[] = [
  { failureClass: 'gpu-access', pattern: /rocm-ebuild: (.*(?:not a character device|cannot open).*)/, message: (m) => m[1]! },
  { failureClass: 'gpu-access', pattern: /check_amdgpu[^\n]*?:?\s*([^\n]*)/, message: (m) => `check_amdgpu failed${m[1] ? `: ${m[1].trim()}` : ''}` },
  { failureClass: 'gpu-access', pattern: /(Unable to open \/dev\/kfd[^\n]*|\/dev\/kfd[^\n]*(?:Permission denied|No such file))/, message: (m) => m[1]! },
  { failureClass: 'gpu-access', pattern: /(hipErrorNoDevice|no ROCm-capable device is detected|No HIP GPUs are available|HSA_STATUS_ERROR_OUT_OF_RESOURCES)/, message: (m) => `the GPU runtime found no usable GPU (${m[1]})` },
];

const OOM: Rule[] = [
  { failureClass: 'oom', pattern: /(c\+\+|g\+\+|cc1plus|clang[^:\s]*)[^\n]*(?:Killed signal terminated program|fatal error: Killed)[^\n]*/, message: (m) => `the compiler was killed (out of memory): ${m[0].trim()}` },
  { failureClass: 'oom', pattern: /(virtual memory exhausted|Cannot allocate memory|std::bad_alloc|Out of memory: Killed process)/, message: (m) => `out of memory (${m[1]})` },
];

const FETCH: Rule[] = [
  { failureClass: 'fetch', pattern: /!!! Fetch failed for (\S+)|!!! Couldn't download '([^']+)'/, message: (m) => `fetch failed: ${m[1] ?? m[2]}` },
  { failureClass: 'fetch', pattern: /!!! Digest verification failed:\s*\n?\s*!!! (\S+)/, message: (m) => `distfile does not match the Manifest: ${m[1]}` },
];

function first(rules: readonly Rule[], text: string): Classified | undefined {
  for (const r of rules) {
    const m = r.pattern.exec(text);
    if (m) return { failureClass: r.failureClass, message: r.message(m) };
  }
  return undefined;
}

/** The last " * ERROR:" line and what Portage printed after it, for the message of a build or test failure. */
function portageError(text: string): string | undefined {
  const lines = text.split('\n');
  const i = lines.map((l) => /\* ERROR: .* failed \(/.test(l)).lastIndexOf(true);
  if (i < 0) return undefined;
  const detail = lines.slice(i + 1, i + 6).map((l) => l.replace(/^\s*\*\s?/, '').trim()).find((l) => l && !/^$|^Call stack|^ebuild\.sh|^environment/.test(l));
  return `${lines[i]!.replace(/^\s*\*\s*/, '').trim()}${detail ? ` ${detail}` : ''}`;
}

/**
 * The class of a failure and a one-line message. The exit status decided
 * that it failed; the class is read from the evidence, most specific first:
 * timeout and interruption (the script and the host know those), the GPU,
 * memory, fetching, dependency resolution, then the phase that failed.
 */
export function classify(e: FailureEvidence): Classified {
  if (e.timedOut) return { failureClass: 'timeout', message: `timed out${e.phase ? ` in the ${e.phase} phase` : ''}` };
  if (e.interrupted) return { failureClass: 'interrupted', message: `interrupted${e.phase ? ` in the ${e.phase} phase` : ''}` };
  if (e.step === 'gpu') return first(GPU, e.text) ?? { failureClass: 'gpu-access', message: 'the GPU device nodes cannot be opened in the container' };
  const gpu = e.phase === 'test' || e.phase === 'compile' || e.phase === 'configure' ? first(GPU, e.text) : undefined;
  if (gpu) return gpu;
  const oom = first(OOM, e.text);
  if (oom) return oom;
  if (e.status === 137) return { failureClass: 'oom', message: 'killed by SIGKILL (exit 137), most likely the kernel OOM killer' };
  const fetch = first(FETCH, e.text);
  if (fetch || e.phase === 'fetch') return fetch ?? { failureClass: 'fetch', message: portageError(e.text) ?? 'fetching the distfiles failed' };
  if (e.step === 'resolve' || !e.phase) {
    const dep = first(DEPENDENCY, e.text);
    if (dep) return dep;
    if (e.step === 'resolve') return { failureClass: 'dependency', message: 'emerge could not calculate the dependencies' };
  }
  const error = portageError(e.text);
  if (e.phase === 'test') return { failureClass: 'test', message: error ?? 'the test phase failed' };
  if (e.phase && ['unpack', 'prepare', 'configure', 'compile', 'install'].includes(e.phase)) return { failureClass: 'build', message: error ?? `the ${e.phase} phase failed` };
  return { failureClass: 'unknown', message: error ?? (e.status === null ? 'not run' : `exit status ${e.status}`) };
}
