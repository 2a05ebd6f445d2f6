import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { root } from './helpers/project.js';

/**
 * The import direction of src/, bottom to top, as docs/ARCHITECTURE.md describes it: a
 * module may import its own layer and the layers below, never one above.
 * Folders not named here are workflows (bump/, upstream/, pr/, …).
 */
const LAYERS: { name: string; members: string[] }[] = [
  { name: 'util', members: ['util/', 'paths.ts'] },
  { name: 'manifest', members: ['manifest/'] },
  { name: 'target data', members: ['eclass/table.ts', 'eclass/policy.ts', 'eclass/version.ts'] },
  { name: 'model', members: ['model/'] },
  { name: 'plan', members: ['plan/'] },
  { name: 'render', members: ['render/'] },
  { name: 'ebuild text', members: ['ebuild/'] },
  { name: 'lint', members: ['lint/'] },
  { name: 'stack-wide checks', members: ['stack-check/'] },
  { name: 'I/O', members: ['distfiles/', 'overlay/', 'git/', 'eclass/', 'portage/'] },
  { name: 'workflows', members: [] },
  { name: 'cli', members: ['cli/'] },
  { name: 'commands', members: ['commands/'] },
];
const WORKFLOWS = LAYERS.findIndex((l) => l.name === 'workflows');

/** Libraries loaded from dist/vendor (src/cli/vendor-bundles.ts), by the name src/ must use. */
const BUNDLED: Record<string, string> = { '@oclif/core': '#oclif', nunjucks: '#nunjucks' };

/** Folders whose imports are narrower than their layer: distfiles/ only uses util/. */
const ONLY: Record<string, string[]> = { 'distfiles/': ['util/', 'distfiles/'] };

/**
 * The rooms of src/upstream/, bottom to top, as docs/ARCHITECTURE.md draws them: a module may
 * import its own room and the ranks below, never a rank above, nor a room beside it on its own
 * rank (so there is no circle among rooms). The files directly in upstream/ sit on top: what the
 * commands share. therock/ reads TheRock's pins; peers/ is where `upstream peer` lands (reading
 * ::gentoo and Spack recipes, comparing them with the manifest's facts).
 */
const UPSTREAM_ROOMS: string[][] = [
  ['trees/'],
  ['facts/'],
  ['replay/'],
  ['releases/', 'evidence/', 'therock/', 'peers/'],
  ['draft/'],
  [''],
];

/** The room of a path under src/upstream/ ("upstream/facts/diff.ts" → "facts/"), with its rank; undefined outside upstream/ or in no room. */
export function upstreamRoomOf(rel: string): { room: string; rank: number } | undefined {
  if (!rel.startsWith('upstream/')) return undefined;
  const inner = rel.slice('upstream/'.length);
  const room = inner.includes('/') ? `${inner.split('/')[0]}/` : '';
  const rank = UPSTREAM_ROOMS.findIndex((r) => r.includes(room));
  return rank >= 0 ? { room, rank } : undefined;
}

/** What is wrong with an import between two modules of src/upstream/ (paths relative to src/), or undefined. */
function upstreamViolation(rel: string, target: string, line: number, specifier: string): string | undefined {
  if (!rel.startsWith('upstream/') || !target.startsWith('upstream/')) return undefined;
  const from = upstreamRoomOf(rel);
  const to = upstreamRoomOf(target);
  const name = (r: { room: string }) => (r.room === '' ? 'upstream/' : `upstream/${r.room}`);
  if (!from) return `src/${rel}:${line}: src/upstream/${rel.split('/')[1]}/ is in no room of upstream/: add it to UPSTREAM_ROOMS and docs/ARCHITECTURE.md`;
  if (!to) return `src/${rel}:${line}: imports ${specifier} (src/${target}), which is in no room of upstream/`;
  if (from.room === to.room) return undefined;
  if (to.rank > from.rank) return `src/${rel}:${line}: imports ${specifier} (src/${target}) from ${name(from)}: ${name(to)} is above it, and lower rooms never import upper ones`;
  if (to.rank === from.rank) return `src/${rel}:${line}: imports ${specifier} (src/${target}) from ${name(from)}: ${name(to)} is beside it, and rooms of one rank do not import each other (move what both need into a room below)`;
  return undefined;
}

/**
 * Folders that may reach another only through its entry points: bump asks lint
 * to judge the ebuilds it writes, and reads ebuilds' text through ebuild/,
 * never through lint's internals.
 */
const ENTRY_POINTS: Record<string, Record<string, string[]>> = {
  'bump/': { 'lint/': ['lint/index.ts', 'lint/component.ts'] },
};

/** The layer of a path relative to src/ ("manifest/load.ts"): the longest member that matches. */
export function layerOf(rel: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((l, i) => {
    for (const m of l.members) {
      const hit = m.endsWith('/') ? rel.startsWith(m) : rel === m;
      if (hit && m.length > bestLength) {
        best = i;
        bestLength = m.length;
      }
    }
  });
  return best >= 0 ? best : WORKFLOWS;
}

export interface Import {
  file: string;
  line: number;
  specifier: string;
}

/** Every module specifier of a file: static imports, re-exports, `import type`, and dynamic `import()`. */
export function importsOf(file: string, text: string): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (node: ts.Node, spec: ts.Expression | undefined) => {
    if (spec && ts.isStringLiteralLike(spec)) {
      found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, specifier: spec.text });
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node, node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal as ts.Expression);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** What is wrong with one import of `rel` (a path under src/), or undefined. */
export function violation(rel: string, imp: Import): string | undefined {
  const bundled = Object.keys(BUNDLED).find((pkg) => imp.specifier === pkg || imp.specifier.startsWith(`${pkg}/`));
  if (bundled) {
    return `src/${rel}:${imp.line}: imports ${imp.specifier}; import ${BUNDLED[bundled]} instead (the bundled copy every other module uses: two copies of oclif in one process break its instanceof checks and settings)`;
  }
  if (!imp.specifier.startsWith('.')) return undefined;
  const target = targetOf(rel, imp.specifier)!;
  if (target.startsWith('..')) return `src/${rel}:${imp.line}: imports ${imp.specifier}, outside src/`;
  const from = layerOf(rel);
  const to = layerOf(target);
  const only = Object.entries(ONLY).find(([folder]) => rel.startsWith(folder));
  if (only && !only[1].some((allowed) => target.startsWith(allowed))) {
    return `src/${rel}:${imp.line}: imports ${imp.specifier} (src/${target}), but ${only[0]} may import only ${only[1].join(', ')}`;
  }
  const narrowed = Object.entries(ENTRY_POINTS).find(([folder]) => rel.startsWith(folder))?.[1] ?? {};
  for (const [folder, entries] of Object.entries(narrowed)) {
    if (target.startsWith(folder) && !entries.includes(target)) {
      return `src/${rel}:${imp.line}: imports ${imp.specifier} (src/${target}), but reaches ${folder} only through ${entries.map((e) => `src/${e}`).join(', ')}`;
    }
  }
  if (to > from) {
    return `src/${rel}:${imp.line}: imports ${imp.specifier} (src/${target}, layer "${LAYERS[to]!.name}") from layer "${LAYERS[from]!.name}": lower layers never import upper ones`;
  }
  return upstreamViolation(rel, target, imp.line, imp.specifier);
}

/** The module a relative import of `rel` names, as a path under src/ ("lint/types.ts"); undefined for a package. */
function targetOf(rel: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return path.posix.normalize(path.posix.join(path.posix.dirname(rel), specifier)).replace(/\.js$/, '.ts');
}

/**
 * Every import circle of a module graph (Tarjan's strongly connected
 * components), each as one path round it: "a.ts → b.ts → a.ts". Type-only and
 * dynamic imports count too: a circle of them still ties the modules to be
 * read, changed and tested together.
 */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = new Set<string>();
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.add(w);
    } while (w !== v);
    if (component.size === 1 && !(graph.get(v) ?? []).includes(v)) return;
    // One way round, from the component's first module in code-point order, by breadth-first search back to it.
    const start = [...component].sort()[0]!;
    const from = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0 && !from.has(start)) {
      const at = queue.shift()!;
      for (const next of graph.get(at) ?? []) {
        if (!component.has(next) || from.has(next)) continue;
        from.set(next, at);
        queue.push(next);
      }
    }
    const path = [start];
    for (let at = from.get(start)!; at !== start; at = from.get(at)!) path.unshift(at);
    circles.push([start, ...path].join(' → '));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles.sort();
}

function sourceFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full, base);
    return e.name.endsWith('.ts') ? [path.relative(base, full).split(path.sep).join('/')] : [];
  });
}

describe('import direction of src/', () => {
  it('finds every kind of import, and a violation when there is one', () => {
    const text = [
      "import { a } from '../cli/stack.js';",
      "import type { B } from '../model/resolve.js';",
      "export { c } from './issues.js';",
      "const d = await import('../bump/run.js');",
      "type E = import('../render/index.js').X;",
      "import fs from 'node:fs';",
    ].join('\n');
    const imports = importsOf('src/manifest/x.ts', text);
    assert.deepEqual(
      imports.map((i) => [i.line, i.specifier]),
      [
        [1, '../cli/stack.js'],
        [2, '../model/resolve.js'],
        [3, './issues.js'],
        [4, '../bump/run.js'],
        [5, '../render/index.js'],
        [6, 'node:fs'],
      ],
    );
    const problems = imports.map((i) => violation('manifest/x.ts', i)).filter(Boolean);
    assert.equal(problems.length, 4);
    assert.match(problems[0]!, /^src\/manifest\/x\.ts:1: imports \.\.\/cli\/stack\.js \(src\/cli\/stack\.ts, layer "cli"\) from layer "manifest"/);
    assert.match(violation('distfiles/x.ts', { file: '', line: 1, specifier: '../model/version.js' }) ?? '', /distfiles\/ may import only util\//);
    assert.equal(violation('bump/run.ts', { file: '', line: 1, specifier: '../stack-check/index.js' }), undefined);
    assert.match(violation('bump/run.ts', { file: '', line: 1, specifier: '../cli/stack.js' }) ?? '', /layer "cli"\) from layer "workflows"/);
    assert.equal(layerOf('eclass/table.ts'), 2);
    assert.equal(layerOf('eclass/generate.ts'), LAYERS.findIndex((l) => l.name === 'I/O'));
    assert.equal(layerOf('upstream/releases/tags.ts'), WORKFLOWS);
    assert.match(violation('commands/x.ts', { file: '', line: 1, specifier: '@oclif/core' }) ?? '', /import #oclif instead/);
    assert.match(violation('render/env.ts', { file: '', line: 1, specifier: 'nunjucks' }) ?? '', /import #nunjucks instead/);
    assert.equal(violation('render/env.ts', { file: '', line: 1, specifier: '#nunjucks' }), undefined);
    assert.match(violation('ebuild/vars.ts', { file: '', line: 1, specifier: '../lint/bash-parser.js' }) ?? '', /layer "lint"\) from layer "ebuild text"/);
    assert.equal(violation('lint/facts.ts', { file: '', line: 1, specifier: '../ebuild/bash-parser.js' }), undefined);
    assert.match(violation('bump/run.ts', { file: '', line: 1, specifier: '../lint/overlay-deps.js' }) ?? '', /reaches lint\/ only through src\/lint\/index\.ts, src\/lint\/component\.ts/);
    assert.equal(violation('bump/check.ts', { file: '', line: 1, specifier: '../lint/component.js' }), undefined);
    assert.equal(violation('pr/lint-range.ts', { file: '', line: 1, specifier: '../lint/external-tools.js' }), undefined);
  });

  it('finds each import circle once, as a path round it', () => {
    const graph = new Map<string, string[]>([
      ['a.ts', ['b.ts', 'node-package']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
      ['f.ts', ['d.ts']],
    ]);
    assert.deepEqual(importCircles(graph), ['a.ts → b.ts → c.ts → a.ts', 'e.ts → e.ts']);
    assert.deepEqual(importCircles(new Map([['x.ts', ['y.ts']], ['y.ts', []]])), []);
  });

  it('no import circle in src/', () => {
    const src = path.join(root, 'src');
    const graph = new Map<string, string[]>();
    for (const rel of sourceFiles(src)) {
      const targets = importsOf(rel, readFileSync(path.join(src, rel), 'utf8')).map((i) => targetOf(rel, i.specifier));
      graph.set(rel, [...new Set(targets.filter((t): t is string => t !== undefined))]);
    }
    assert.ok(graph.size > 50, `only ${graph.size} files found under src/`);
    assert.deepEqual(importCircles(graph), []);
  });

  it('finds an upstream/ room importing one above or beside it', () => {
    const at = (rel: string, specifier: string) => violation(rel, { file: '', line: 3, specifier });
    assert.equal(at('upstream/facts/diff.ts', '../trees/sources.js'), undefined);
    assert.equal(at('upstream/facts/build-facts.ts', './cmake-facts.js'), undefined);
    assert.equal(at('upstream/draft/derive.ts', '../therock/release.js'), undefined);
    assert.equal(at('upstream/select.ts', './draft/derive.js'), undefined);
    assert.equal(at('upstream/therock/release.ts', '../../model/version.js'), undefined);
    assert.match(
      at('upstream/trees/sources.ts', '../facts/build-facts.js') ?? '',
      /^src\/upstream\/trees\/sources\.ts:3: imports \.\.\/facts\/build-facts\.js \(src\/upstream\/facts\/build-facts\.ts\) from upstream\/trees\/: upstream\/facts\/ is above it/,
    );
    assert.match(at('upstream/replay/replay.ts', '../evidence/check.js') ?? '', /upstream\/evidence\/ is above it/);
    assert.match(at('upstream/evidence/check.ts', '../select.js') ?? '', /upstream\/ is above it/);
    assert.match(at('upstream/evidence/check.ts', '../releases/tags.js') ?? '', /upstream\/releases\/ is beside it, and rooms of one rank do not import each other/);
    assert.match(at('upstream/peers/compare.ts', '../therock/compare.js') ?? '', /is beside it/);
    assert.match(at('upstream/misc/x.ts', '../trees/exec.js') ?? '', /src\/upstream\/misc\/ is in no room of upstream\//);
    assert.deepEqual(upstreamRoomOf('upstream/facts/cmake-lexer.ts'), { room: 'facts/', rank: 1 });
    assert.deepEqual(upstreamRoomOf('upstream/select.ts'), { room: '', rank: UPSTREAM_ROOMS.length - 1 });
    assert.equal(upstreamRoomOf('bump/run.ts'), undefined);
  });

  it('every folder of src/upstream/ is a room with a rank', () => {
    const folders = readdirSync(path.join(root, 'src', 'upstream'), { withFileTypes: true }).filter((e) => e.isDirectory());
    assert.ok(folders.length >= 6, `only ${folders.length} folders under src/upstream/`);
    for (const f of folders) assert.ok(upstreamRoomOf(`upstream/${f.name}/x.ts`), `src/upstream/${f.name}/ is in no room: add it to UPSTREAM_ROOMS and docs/ARCHITECTURE.md`);
  });

  it('no import circle among the modules of src/upstream/, type-only imports included', () => {
    const src = path.join(root, 'src');
    const files = sourceFiles(path.join(src, 'upstream')).map((f) => `upstream/${f}`);
    const edges = new Map<string, string[]>();
    for (const rel of files) {
      const targets = importsOf(rel, readFileSync(path.join(src, rel), 'utf8'))
        .filter((i) => i.specifier.startsWith('.'))
        .map((i) => path.posix.normalize(path.posix.join(path.posix.dirname(rel), i.specifier)).replace(/\.js$/, '.ts'))
        .filter((t) => t.startsWith('upstream/'));
      edges.set(rel, targets);
    }
    // Depth-first search; a module met again while still on the path closes a circle.
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (m: string, trail: string[]) => {
      if (state.get(m) === 'done') return;
      if (state.get(m) === 'open') {
        circles.push([...trail.slice(trail.indexOf(m)), m].join(' → '));
        return;
      }
      state.set(m, 'open');
      for (const t of edges.get(m) ?? []) visit(t, [...trail, m]);
      state.set(m, 'done');
    };
    for (const f of files) visit(f, []);
    assert.ok(files.length > 30, `only ${files.length} files found under src/upstream/`);
    assert.deepEqual(circles, []);
  });

  it('no module imports from a layer above its own', () => {
    const src = path.join(root, 'src');
    const problems: string[] = [];
    const files = sourceFiles(src);
    for (const rel of files) {
      for (const imp of importsOf(rel, readFileSync(path.join(src, rel), 'utf8'))) {
        const v = violation(rel, imp);
        if (v) problems.push(v);
      }
    }
    assert.ok(files.length > 50, `only ${files.length} files found under src/`);
    assert.deepEqual(problems, []);
  });
});
