import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Alias, isAlias, isMap, isPair, isScalar, isSeq, parseDocument, Scalar, visit, type Document, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';

/**
 * A copy of a manifest with twice its releases, for measuring what a command
 * costs as the manifest grows: every release X.Y.Z becomes X.Y.(2Z), and a
 * copy of it X.Y.(2Z+1) joins it wherever a release is named (the stack's
 * release list and project lists, each evidence record's list). Range bounds
 * (`from`, `until`) are renumbered the same way, so a copy lies in exactly the
 * ranges its original does (no bound can fall between 2Z and 2Z+1) and
 * resolves to the same packages, overrides and target policy. The files keep
 * their comments and layout; each grows as a manifest gaining releases does.
 */

const VERSION = /^(\d+)\.(\d+)\.(\d+)$/;

function renumber(v: string, copy = false): string {
  const m = VERSION.exec(v)!;
  return `${m[1]}.${m[2]}.${Number(m[3]) * 2 + (copy ? 1 : 0)}`;
}

const isVersion = (n: unknown): n is Scalar<string> => isScalar(n) && typeof n.value === 'string' && VERSION.test(n.value);

/** A version range: a mapping of `from` and/or `until` only. */
function isRange(n: unknown): boolean {
  return isMap(n) && n.items.length > 0 && n.items.every((p) => isScalar(p.key) && (p.key.value === 'from' || p.key.value === 'until'));
}

function doubleDocument(doc: Document, releaseMaps: boolean): void {
  visit(doc, {
    Map(_, map) {
      if (isRange(map)) {
        for (const p of map.items) if (isVersion(p.value)) p.value.value = renumber(p.value.value);
        return undefined;
      }
      if (!releaseMaps) return undefined;
      // stack.yaml's `releases` and `projects`: a copy of each entry under the copy's version.
      for (const key of ['releases', 'projects']) {
        const inner = map.get(key, true);
        if (!isMap(inner) || !inner.items.every((p) => isVersion(p.key))) continue;
        const items: Pair[] = [];
        for (const p of inner.items as Pair<Scalar<string>>[]) {
          const original = p.key.value;
          p.key.value = renumber(original);
          const value = isAlias(p.value) ? new Alias(p.value.source) : doc.createAlias(anchored(p.value, `release-${p.key.value.replaceAll('.', '-')}`));
          const copy = new Scalar(renumber(original, true));
          copy.type = Scalar.QUOTE_DOUBLE;
          items.push(p, doc.createPair(copy, value) as Pair);
        }
        inner.items = items;
      }
      return undefined;
    },
    Seq(_, seq) {
      // An evidence record's `releases`: every release it names, and its copy.
      if (seq.items.length === 0 || !seq.items.every(isVersion)) return undefined;
      seq.items = (seq.items as Scalar<string>[]).flatMap((s) => [new Scalar(renumber(s.value)), new Scalar(renumber(s.value, true))]);
      for (const s of seq.items as Scalar[]) s.type = Scalar.QUOTE_DOUBLE;
      return undefined;
    },
  });
}

/** The node as an alias target: its own anchor, or `name` when it has none. */
function anchored(node: unknown, name: string): Scalar | YAMLMap | YAMLSeq {
  if (isPair(node) || !(isScalar(node) || isMap(node) || isSeq(node))) throw new Error('release entry is not a node');
  node.anchor ??= name;
  return node;
}

/** Every file of manifest directory `src` into `dest`, the YAML files with their releases doubled; returns dest's stack.yaml. */
export async function doubledManifest(src: string, dest: string): Promise<string> {
  await fs.rm(dest, { recursive: true, force: true });
  const walk = async (from: string, to: string): Promise<void> => {
    await fs.mkdir(to, { recursive: true });
    for (const e of await fs.readdir(from, { withFileTypes: true })) {
      const a = path.join(from, e.name);
      const b = path.join(to, e.name);
      if (e.isDirectory()) {
        await walk(a, b);
        continue;
      }
      if (!e.name.endsWith('.yaml')) {
        await fs.copyFile(a, b);
        continue;
      }
      const doc = parseDocument(await fs.readFile(a, 'utf8'), { keepSourceTokens: false });
      doubleDocument(doc, e.name === 'stack.yaml' && from === src);
      await fs.writeFile(b, doc.toString({ lineWidth: 0 }));
    }
  };
  await walk(src, dest);
  return path.join(dest, 'stack.yaml');
}
