import { Args, Flags } from '#oclif';
import { requirePackageNames } from '../model/package-names.js';
import { BaseCommand } from '../cli/base-command.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../cli/stack.js';
import { buildGraph, layers, subgraph, toDot, toText } from '../plan/graph.js';

export default class Graph extends BaseCommand {
  static override summary = 'Show the build-order graph of a release as text or Graphviz DOT';
  static override description =
    'Packages in the order a bump commits them (each after everything it depends on), with their ' +
    'dependencies inside the stack; given packages, only them and what they need. DOT output groups the ' +
    'packages by build-order layer (a layer needs only the layers before it), draws test-only edges dashed and ' +
    'build-tool edges dotted, and carries a legend. ' +
    'Exit codes: 0 shown, 2 invalid manifest, unknown release or package.';

  static override examples = [
    { description: 'Build order of ROCm 6.2.2', command: '<%= config.bin %> <%= command.id %> --version 6.2.2' },
    { description: 'What rocBLAS needs, in build order', command: '<%= config.bin %> <%= command.id %> rocBLAS --version 6.2.2' },
    { description: 'Render the graph with Graphviz', command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --format dot | dot -Tsvg > rocm.svg' },
  ];

  static override strict = false;
  static override args = { atoms: Args.string({ ignoreStdin: true, description: 'packages whose part of the graph is shown (default: all)' }) };

  static override flags = {
    version: Flags.string({ char: 'v', description: 'ROCm release', required: true, helpValue: 'X.Y.Z' }),
    format: Flags.string({ description: 'output format', options: ['text', 'dot'], default: 'text' }),
    manifest: manifestFlag,
  };

  async run(): Promise<{ version: string; order: string[]; layers: Record<string, number>; edges: { from: string; to: string; classes: string[]; testOnly: boolean }[] }> {
    const { argv, flags } = await this.parse(Graph);
    const manifest = await loadManifestOrFail(flags.manifest);
    const model = await stackFor(manifest, flags.version);
    const roots = requirePackageNames(argv as string[], model.components.map((c) => c.atom), `ROCm ${flags.version}`);
    const whole = buildGraph(model);
    const graph = roots.length ? subgraph(whole, roots) : whole;
    if (!this.jsonEnabled()) {
      process.stdout.write(flags.format === 'dot' ? toDot(graph, `ROCm ${flags.version}`) : toText(graph));
    }
    return { version: flags.version, order: graph.order, layers: Object.fromEntries(layers(graph)), edges: graph.edges };
  }
}
