import type { GtestReport } from './gtest.js';
import { REPORT_PHASES, type AtomReport, type TestReport } from './report.js';

function esc(text: string): string {
  // XML 1.0 cannot carry most control characters, even escaped: build logs may hold them.
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

interface Case {
  name: string;
  classname: string;
  seconds: number;
  failure?: { type: string; message: string; text?: string };
  skipped?: string;
}

function suite(name: string, cases: readonly Case[], timestamp: string): string {
  const failures = cases.filter((c) => c.failure).length;
  const skipped = cases.filter((c) => c.skipped !== undefined).length;
  const time = cases.reduce((t, c) => t + c.seconds, 0);
  const lines = [`  <testsuite name="${esc(name)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time.toFixed(3)}" timestamp="${esc(timestamp)}">`];
  for (const c of cases) {
    const open = `    <testcase name="${esc(c.name)}" classname="${esc(c.classname)}" time="${c.seconds.toFixed(3)}"`;
    if (c.failure) {
      lines.push(`${open}>`, `      <failure type="${esc(c.failure.type)}" message="${esc(c.failure.message)}">${esc(c.failure.text ?? c.failure.message)}</failure>`, '    </testcase>');
    } else if (c.skipped !== undefined) {
      lines.push(`${open}>`, `      <skipped message="${esc(c.skipped)}"/>`, '    </testcase>');
    } else {
      lines.push(`${open}/>`);
    }
  }
  lines.push('  </testsuite>');
  return lines.join('\n');
}

/** The phases an atom went through, each a test case: the failing one fails, those after it are skipped. */
function phaseCases(a: AtomReport, classname: string): Case[] {
  const order = REPORT_PHASES.filter((p) => p !== 'merged' && p !== 'resolve' && (p !== 'test' || a.tested));
  if (a.result === 'skipped' || a.result === 'not-run') {
    return [{ name: 'emerge', classname, seconds: 0, skipped: a.message ?? a.result }];
  }
  if (a.result === 'passed') {
    // A package from a binary package was not built here: one case says so.
    if (a.binpkg) return [{ name: 'binpkg', classname, seconds: a.seconds }];
    return order.map((p) => ({ name: p, classname, seconds: 0 })).map((c, i) => (i === 0 ? { ...c, seconds: a.seconds } : c));
  }
  const reached = a.phase === 'resolve' ? -1 : order.indexOf(a.phase as (typeof order)[number]);
  const cases: Case[] = [];
  if (reached < 0) {
    cases.push({ name: 'resolve', classname, seconds: a.seconds, failure: { type: a.failureClass ?? 'unknown', message: a.message ?? 'failed' } });
    return cases;
  }
  order.forEach((p, i) => {
    if (i < reached) cases.push({ name: p, classname, seconds: 0 });
    else if (i === reached) cases.push({ name: p, classname, seconds: a.seconds, failure: { type: a.failureClass ?? 'unknown', message: a.message ?? 'failed' } });
    else cases.push({ name: p, classname, seconds: 0, skipped: `not reached: ${a.phase} failed` });
  });
  return cases;
}

/**
 * JUnit XML for CI systems: one test suite per atom with one test case per
 * phase, then the googletest suites the package wrote (its own test cases,
 * classname prefixed with the atom), so a failing gtest shows by name.
 */
export function junitXml(report: TestReport, gtest: readonly GtestReport[]): string {
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  const add = (name: string, cases: Case[]) => {
    tests += cases.length;
    failures += cases.filter((c) => c.failure).length;
    suites.push(suite(name, cases, report.started));
  };
  for (const a of report.atoms) {
    const gfx = report.gfx ?? 'no-gpu';
    const classname = `${gfx}.${a.atom}`;
    add(`${a.atom}${a.tested ? '' : ' (dependency)'}`, phaseCases(a, classname));
    if (!a.tested) continue;
    for (const g of gtest.filter((x) => a.logs.includes(x.file))) {
      for (const s of g.suites) {
        add(
          `${a.atom} ${s.name}`,
          s.cases.map((c) => ({
            name: c.name,
            classname: `${gfx}.${a.atom}.${c.classname}`,
            seconds: c.seconds,
            ...(c.failure !== undefined ? { failure: { type: 'gtest', message: c.failure.split('\n')[0] ?? 'failed', text: c.failure } } : {}),
            ...(c.skipped && c.failure === undefined ? { skipped: 'skipped' } : {}),
          })),
        );
      }
    }
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="rocm-ebuild test ROCm ${esc(report.release)} ${esc(report.gfx ?? 'no-gpu')}" tests="${tests}" failures="${failures}" errors="0">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
