import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isPair, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import type { SourceReader } from '../../src/manifest/load.js';
import { formatIssue, type ManifestIssue } from '../../src/manifest/issues.js';
import { parseYamlSource, readYamlSource, type SourceRead } from '../../src/manifest/yaml-source.js';
import { loadManifestOrFail } from '../../src/stack-check/index.js';
import { UserError } from '../../src/util/errors.js';
import { ExitCode } from '../../src/util/exit-codes.js';
import { copyShippedManifest } from '../helpers/manifest-copy.js';
import { removeDir, root, tempDir } from '../helpers/project.js';
import { sample } from '../helpers/sample.js';

/** One generated mistake: a file of the shipped manifest with its text changed. */
interface Mutation {
  file: string;
  kind: string;
  text: string;
}

type Mutator = (text: string, doc: Document) => string | undefined;

const topKeys = (doc: Document): string[] =>
  isMap(doc.contents) ? doc.contents.items.filter(isPair).map((p) => String((p.key as { value: unknown }).value)) : [];

/**
 * Re-serialise a document after an edit made through the yaml API; undefined
 * when the edit removed an anchor that an alias elsewhere still names (the
 * yaml library cannot write that document, so the mistake does not apply).
 */
function edited(text: string, change: (doc: Document) => void): string | undefined {
  const doc = parseDocument(text, { version: '1.2' });
  change(doc);
  try {
    return doc.toString();
  } catch (err) {
    if (err instanceof Error && /Unresolved alias/.test(err.message)) return undefined;
    throw err;
  }
}

/**
 * Kinds of mistakes people make in YAML data, each applied to a file as a
 * whole; undefined where a kind does not apply to that file.
 */
const COMPONENT_MUTATORS: Record<string, Mutator> = {
  'delete required key atom': (t) => edited(t, (d) => d.deleteIn(['atom'])),
  'delete required key sources': (t) => edited(t, (d) => d.deleteIn(['sources'])),
  'delete required key build': (t) => edited(t, (d) => d.deleteIn(['build'])),
  'list where text belongs': (t) => edited(t, (d) => d.setIn(['description'], d.createNode([1, 2]))),
  'text where a list belongs': (t) => edited(t, (d) => d.setIn(['sources'], 'ROCm/somewhere')),
  'mapping where a list belongs': (t, doc) => (doc.hasIn(['deps']) ? edited(t, (d) => d.setIn(['deps'], d.createNode({ atom: 'dev-libs/x' }))) : undefined),
  'number where text belongs': (t) => edited(t, (d) => d.setIn(['description'], 12345)),
  'null value': (t) => t.replace(/^atom: .*$/m, 'atom:'),
  'duplicate key': (t) => `${t}${t.endsWith('\n') ? '' : '\n'}name: again\n`,
  'misspelt key': (t) => t.replace(/^build:/m, 'biuld:'),
  'value not in the enum': (t) => t.replace(/^build: .*$/m, 'build: make'),
  'malformed atom': (t) => t.replace(/^atom: .*$/m, 'atom: not an atom'),
  'truncated after sources:': (t) => {
    const i = t.search(/^sources:\n/m);
    return i < 0 ? undefined : t.slice(0, i + 'sources:\n'.length);
  },
  'tab indentation': (t) => {
    const m = /^( +)\S/m.exec(t);
    return m ? `${t.slice(0, m.index)}\t${t.slice(m.index + m[1]!.length)}` : undefined;
  },
  'unclosed flow sequence': (t) => `${t}extra: [unclosed\n`,
  'control character': (t) => edited(t, (d) => d.setIn(['description'], 'A library for GPUs\u0007 with a bell in it')),
  'unquoted version 6.10': (t) => edited(t, (d) => d.setIn(['releases'], parseDocument('{ from: 6.10 }', { version: '1.2' }).contents)),
  'key of the wrong case': (t) => t.replace(/^license:/m, 'License:'),
  'empty file': () => '',
  'only comments': () => '# to do\n',
  'dependency on nothing': (t, doc) => {
    if (!isSeq(doc.getIn(['deps']))) return undefined;
    return edited(t, (d) => d.setIn(['deps', 0, 'atom'], 'dev-libs/does-not-exist'));
  },
};

const STACK_MUTATORS: Record<string, Mutator> = {
  'delete required key releases': (t) => edited(t, (d) => d.deleteIn(['releases'])),
  'delete required key components': (t) => edited(t, (d) => d.deleteIn(['components'])),
  'unquoted release key 6.10': (t) => t.replace(/^releases:\n/m, 'releases:\n  6.10: { llvm_slot: 18, python_compat: "python3_{10..12}" }\n'),
  'text where a list belongs': (t) => edited(t, (d) => d.setIn(['components'], 'components/*.yaml')),
  'glob outside the manifest': (t) => edited(t, (d) => d.setIn(['components'], d.createNode(['../*.yaml']))),
  'excluded without reason': (t, doc) => (isSeq(doc.getIn(['excluded'])) ? edited(t, (d) => d.deleteIn(['excluded', 0, 'reason'])) : undefined),
  'malformed maintainer email': (t) => edited(t, (d) => d.setIn(['defaults', 'maintainers', 0, 'email'], 'not an email')),
  'duplicate key': (t) => `${t}\nname: again\n`,
  'llvm slot as text': (t, doc) => {
    const first = topKeysOf(doc.getIn(['releases']))[0];
    return first ? edited(t, (d) => d.setIn(['releases', first, 'llvm_slot'], 'eighteen')) : undefined;
  },
  'project listed nowhere': (t, doc) => {
    const first = topKeysOf(doc.getIn(['projects']))[0];
    return first ? edited(t, (d) => (d.getIn(['projects', first]) as { add(v: unknown): void }).add('NoSuchProject')) : undefined;
  },
};

const EXTERNAL_MUTATORS: Record<string, Mutator> = {
  'subslot as text': (t, doc) => {
    const first = topKeysOf(doc.getIn(['packages']))[0];
    return first ? edited(t, (d) => d.setIn(['packages', first, 'subslot'], 'yes')) : undefined;
  },
  'malformed atom key': (t) => t.replace(/^packages:\n/m, 'packages:\n  notanatom: { subslot: false }\n'),
  'null entry': (t) => t.replace(/^packages:\n/m, 'packages:\n  dev-libs/nothing:\n'),
  'unknown key': (t) => t.replace(/^packages:\n/m, 'packages:\n  dev-libs/extra: { subslot: false, colour: blue }\n'),
};

const TARGETS_MUTATORS: Record<string, Mutator> = {
  'malformed target name': (t) => edited(t, (d) => d.setIn(['targets', 0, 'name'], 'gfx_bad')),
  'target listed twice': (t, doc) => {
    const first = (doc.getIn(['targets', 0]) as { toJSON(): unknown } | undefined)?.toJSON();
    return first ? edited(t, (d) => (d.getIn(['targets']) as { add(v: unknown): void }).add(d.createNode(first))) : undefined;
  },
  'unquoted version 6.10': (t) => edited(t, (d) => d.setIn(['policies', 0, 'from'], parseDocument('6.10', { version: '1.2' }).contents)),
  'delete required key live': (t) => edited(t, (d) => d.deleteIn(['live'])),
};

function topKeysOf(node: unknown): string[] {
  return isMap(node) ? node.items.filter(isPair).map((p) => String(isScalar(p.key) ? p.key.value : p.key)) : [];
}

/**
 * Each kind applied to a rotating share of the component files (every kind
 * to several files, every file to several kinds), and every stack, external
 * and targets kind to its file: about 150 mutations, deterministic.
 */
function corpus(stackFile: string): Mutation[] {
  const dir = path.dirname(stackFile);
  const components = readdirSync(path.join(dir, 'components'))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => path.join(dir, 'components', f));
  const out: Mutation[] = [];
  const apply = (file: string, mutators: Record<string, Mutator>, pick: (kindIndex: number) => boolean) => {
    const text = readFileSync(file, 'utf8');
    const doc = parseDocument(text, { version: '1.2' });
    Object.entries(mutators).forEach(([kind, mutate], k) => {
      if (!pick(k)) return;
      const changed = mutate(text, doc);
      if (changed !== undefined && changed !== text) out.push({ file, kind, text: changed });
    });
  };
  const kinds = Object.keys(COMPONENT_MUTATORS).length;
  components.forEach((file, i) => apply(file, COMPONENT_MUTATORS, (k) => (i + k) % 7 === 0 || (i < kinds && k === i)));
  apply(stackFile, STACK_MUTATORS, () => true);
  apply(path.join(dir, 'external', 'base.yaml'), EXTERNAL_MUTATORS, () => true);
  apply(path.join(dir, 'targets.yaml'), TARGETS_MUTATORS, () => true);
  return out;
}

describe('a corpus of generated mistakes in the shipped manifest', function () {
  this.timeout(600_000);

  // Each mutation checks every release of the manifest it is made in: a copy keeping one release of
  // each family (all of them with ROCM_EBUILD_TEST_FULL=1), so the corpus costs the same however
  // many releases the shipped manifest gains.
  let work: string;
  let shippedManifest: string;
  before(async () => {
    work = await tempDir('rocm-ebuild-corpus-');
    // The stack mutators edit the first release of `projects:` (and of `releases:`): kept in the copy.
    const shipped = parseDocument(readFileSync(path.join(root, 'manifest', 'stack.yaml'), 'utf8'), { version: '1.2' });
    const firsts = [topKeysOf(shipped.getIn(['projects']))[0], topKeysOf(shipped.getIn(['releases']))[0]].filter((v): v is string => v !== undefined);
    shippedManifest = path.join(await copyShippedManifest(path.join(work, 'manifest'), ['6.2.2', ...firsts]), 'stack.yaml');
  });
  after(() => removeDir(work));

  it('each gives exit 2 with located issues and hints, never exit 0 or an internal error', async () => {
    const all = corpus(shippedManifest);
    assert.ok(all.length > 100, `${all.length} mutations`);
    const kinds = new Set(all.map((m) => m.kind));
    assert.ok(kinds.size >= Object.keys(COMPONENT_MUTATORS).length, `only ${kinds.size} kinds applied`);
    // A seeded share of the corpus, every kind at least once; all of it with ROCM_EBUILD_TEST_FULL=1.
    const firstOfKind = [...kinds].map((k) => all.find((m) => m.kind === k)!);
    const mutations = [...new Set([...firstOfKind, ...sample(all, 40, 'manifest corpus')])];

    const cache = new Map<string, Promise<SourceRead>>();
    const base: SourceReader = (f) => {
      if (!cache.has(f)) cache.set(f, readYamlSource(f));
      return cache.get(f)!;
    };
    const failures: string[] = [];
    for (const m of mutations) {
      const label = `${path.relative(path.dirname(shippedManifest), m.file)}: ${m.kind}`;
      const parsed = parseYamlSource(m.file, m.text);
      const readSource: SourceReader = (f) => (f === m.file ? Promise.resolve(parsed) : base(f));
      let issues: ManifestIssue[];
      try {
        await loadManifestOrFail(shippedManifest, { readSource });
        failures.push(`${label}: accepted (exit 0)`);
        continue;
      } catch (err) {
        if (!(err instanceof UserError) || err.exitCode !== ExitCode.invalidInput) {
          failures.push(`${label}: ${err instanceof UserError ? `exit ${err.exitCode}` : `internal error (exit 1): ${String((err as Error).stack ?? err)}`}`);
          continue;
        }
        issues = (err.details as { issues: ManifestIssue[] }).issues;
      }
      const here = issues.filter((i) => i.file === m.file);
      if (here.length === 0) failures.push(`${label}: no issue in the changed file: ${issues.map((i) => formatIssue(i)).join(' | ')}`);
      for (const i of issues) {
        if (!(i.line > 0 && i.column > 0)) failures.push(`${label}: not located: ${formatIssue(i)}`);
        if (!i.hint) failures.push(`${label}: no hint: ${formatIssue(i)}`);
      }
    }
    assert.ok(failures.length === 0, `${failures.length} of ${mutations.length} mutations went wrong:\n${failures.join('\n')}`);
  });
});
