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

/** Graphviz DOT: an edge points from a package to what it needs. */
export function toDot(graph: BuildGraph, title: string): string {
  const lines = [`digraph "${title.replace(/"/g, '')}" {`, '\trankdir=LR;', '\tnode [shape=box, fontname="monospace"];'];
  for (const n of graph.order.length ? graph.order : graph.nodes) lines.push(`\t"${n}";`);
  for (const e of graph.edges) {
    const style = e.testOnly ? ' [style=dashed, label="test"]' : e.classes.every((k) => k === 'BDEPEND') ? ' [style=dotted]' : '';
    lines.push(`\t"${e.from}" -> "${e.to}"${style};`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
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
