import type { StackModel } from '../model/resolve.js';

export interface Edge {
  /** The package that needs… */
  from: string;
  /** …this one built first. */
  to: string;
  classes: string[];
  testOnly: boolean;
}

export interface BuildGraph {
  nodes: string[];
  edges: Edge[];
  /** Build order: every package after all it depends on. */
  order: string[];
  /** Strongly connected groups that prevent an order (empty when fine). */
  cycles: string[][];
}

/**
 * The build-order DAG of one release. Every dependency between stack packages
 * is an edge except PDEPEND (built after, by definition). Test-only edges are
 * kept when they fit and dropped only if they would close a cycle, so commits
 * still build on each other whenever upstream allows it.
 */
export function buildGraph(model: StackModel): BuildGraph {
  const nodes = model.components.map((c) => c.atom).sort();
  const byPair = new Map<string, Edge>();
  for (const c of model.components) {
    for (const d of c.spec.deps ?? []) {
      if (!model.byAtom.has(d.atom) || d.atom === c.atom || d.blocker) continue;
      const classes = d.classes.filter((k) => k !== 'PDEPEND');
      if (classes.length === 0) continue;
      const key = `${c.atom}\u0000${d.atom}`;
      const testOnly = d.when === 'test';
      const prev = byPair.get(key);
      if (prev) {
        prev.classes = [...new Set([...prev.classes, ...classes])];
        prev.testOnly &&= testOnly;
      } else {
        byPair.set(key, { from: c.atom, to: d.atom, classes, testOnly });
      }
    }
  }
  const edges = [...byPair.values()];
  let order = topoSort(nodes, edges);
  let cycles: string[][] = [];
  if (!order) {
    order = topoSort(
      nodes,
      edges.filter((e) => !e.testOnly),
    );
    if (!order) cycles = findCycles(nodes, edges.filter((e) => !e.testOnly));
  }
  return { nodes, edges, order: order ?? [], cycles };
}

/** Kahn's algorithm, ties broken by name so the order is stable across runs. */
function topoSort(nodes: string[], edges: Edge[]): string[] | undefined {
  const pending = new Map(nodes.map((n) => [n, 0]));
  const dependents = new Map<string, string[]>(nodes.map((n) => [n, []]));
  for (const e of edges) {
    pending.set(e.from, pending.get(e.from)! + 1);
    dependents.get(e.to)!.push(e.from);
  }
  const ready = nodes.filter((n) => pending.get(n) === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    ready.sort();
    const n = ready.shift()!;
    order.push(n);
    for (const m of dependents.get(n)!) {
      const left = pending.get(m)! - 1;
      pending.set(m, left);
      if (left === 0) ready.push(m);
    }
  }
  return order.length === nodes.length ? order : undefined;
}

/** Tarjan's strongly connected components with more than one member (or a self-loop). */
function findCycles(nodes: string[], edges: Edge[]): string[][] {
  const next = new Map<string, string[]>(nodes.map((n) => [n, []]));
  for (const e of edges) next.get(e.from)!.push(e.to);
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v)!) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) {
        low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const n of nodes) if (!idx.has(n)) visit(n);
  return out;
}

/**
 * The build-order layer of each package: 0 for what needs nothing in the stack, else one more
 * than the highest layer of what it needs. Packages of one layer can be built side by side.
 * Edges dropped to break a cycle (test-only ones) are not counted.
 */
export function layers(graph: BuildGraph): Map<string, number> {
  const position = new Map(graph.order.map((n, i) => [n, i]));
  const needs = new Map<string, string[]>();
  for (const e of graph.edges) needs.set(e.from, [...(needs.get(e.from) ?? []), e.to]);
  const layer = new Map<string, number>();
  for (const n of graph.order) {
    // In build order, so every dependency that counts already has its layer; one that comes later closed a cycle.
    const below = (needs.get(n) ?? []).filter((d) => position.get(d)! < position.get(n)!).map((d) => layer.get(d)!);
    layer.set(n, below.length ? Math.max(...below) + 1 : 0);
  }
  return layer;
}

/** The part of the graph `roots` need: them and everything they depend on, transitively. */
export function subgraph(graph: BuildGraph, roots: readonly string[]): BuildGraph {
  const keep = new Set<string>();
  const next = new Map<string, string[]>();
  for (const e of graph.edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const visit = (n: string) => {
    if (keep.has(n)) return;
    keep.add(n);
    for (const d of next.get(n) ?? []) visit(d);
  };
  for (const r of roots) visit(r);
  return {
    nodes: graph.nodes.filter((n) => keep.has(n)),
    edges: graph.edges.filter((e) => keep.has(e.from) && keep.has(e.to)),
    order: graph.order.filter((n) => keep.has(n)),
    cycles: graph.cycles.filter((c) => c.some((n) => keep.has(n))),
  };
}

const quote = (s: string) => `"${s.replace(/["\\]/g, '')}"`;

/**
 * Graphviz DOT: an edge points from a package to what it needs. Packages are grouped in one
 * cluster per build-order layer, laid out left to right in build order, and a legend says what
 * the edge styles and the clusters mean.
 */
export function toDot(graph: BuildGraph, title: string): string {
  const lines = [
    `digraph ${quote(title)} {`,
    `	label=${quote(`${title}: build order, left to right`)};`,
    '	labelloc=t;',
    '	rankdir=LR;',
    '	newrank=true;',
    '	node [shape=box, fontname="monospace"];',
  ];
  const layer = layers(graph);
  const byLayer = new Map<number, string[]>();
  for (const n of graph.order) byLayer.set(layer.get(n)!, [...(byLayer.get(layer.get(n)!) ?? []), n]);
  for (const [i, members] of [...byLayer].sort((a, b) => a[0] - b[0])) {
    lines.push(`	subgraph "cluster_layer_${i}" {`, `		label=${quote(`layer ${i}${i === 0 ? ': needs nothing in the stack' : ''}`)};`, '		style=rounded;', '		color=grey;');
    for (const n of members) lines.push(`		${quote(n)};`);
    lines.push('	}');
  }
  // Packages of a cycle have no layer: drawn on their own.
  for (const n of graph.nodes) if (!layer.has(n)) lines.push(`	${quote(n)};`);
  for (const e of graph.edges) {
    const style = e.testOnly ? ' [style=dashed, label="test"]' : e.classes.every((k) => k === 'BDEPEND') ? ' [style=dotted]' : '';
    lines.push(`	${quote(e.from)} -> ${quote(e.to)}${style};`);
  }
  lines.push(
    '	subgraph "cluster_legend" {',
    '		label="legend";',
    '		style=dashed;',
    '		node [shape=plaintext, fontname="sans-serif"];',
    '		"legend: package" [shape=box, fontname="monospace", label="cat/pkg"];',
    '		"legend: needs" [label="needs it (DEPEND, RDEPEND)"];',
    '		"legend: build tool" [label="needs it to build (BDEPEND)"];',
    '		"legend: test" [label="needs it for its tests only"];',
    '		"legend: package" -> "legend: needs";',
    '		"legend: package" -> "legend: build tool" [style=dotted];',
    '		"legend: package" -> "legend: test" [style=dashed, label="test"];',
    '		"legend: layer" [label="a grey box: one build-order layer, whose packages can be built side by side"];',
    '	}',
    '}',
  );
  return `${lines.join('\n')}\n`;
}

/** Every package of several releases in build order: the newest release's order, then what only older ones have. */
export function orderAcross(graphsNewestFirst: readonly BuildGraph[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const g of graphsNewestFirst) {
    for (const n of g.order.length ? g.order : g.nodes) {
      if (!seen.has(n)) {
        seen.add(n);
        out.push(n);
      }
    }
  }
  return out;
}

/** Plain text: packages in build order, each with what it needs. */
export function toText(graph: BuildGraph): string {
  const needs = new Map<string, string[]>();
  for (const e of graph.edges) needs.set(e.from, [...(needs.get(e.from) ?? []), e.testOnly ? `${e.to} (test)` : e.to]);
  const width = String(graph.order.length).length;
  return graph.order
    .map((n, i) => {
      const deps = (needs.get(n) ?? []).sort();
      return `${String(i + 1).padStart(width)}. ${n}${deps.length ? `  <- ${deps.join(', ')}` : ''}`;
    })
    .join('\n')
    .concat('\n');
}
