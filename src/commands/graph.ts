import { Flags } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../cli/stack.js';
import { buildGraph, toDot, toText } from '../plan/graph.js';

export default class Graph extends BaseCommand {
  static override summary = 'Show the build-order graph of a release as text or Graphviz DOT';
  static override description =
    'Packages in the order a bump commits them (each after everything it depends on), with their ' +
    'dependencies inside the stack. DOT output draws test-only edges dashed and build-tool edges dotted. ' +
    'Exit codes: 0 shown, 2 invalid manifest or unknown release.';

  static override examples = [
    { description: 'Build order of ROCm 6.2.2', command: '<%= config.bin %> <%= command.id %> --version 6.2.2' },
    { description: 'Render the graph with Graphviz', command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --format dot | dot -Tsvg > rocm.svg' },
  ];

  static override flags = {
    version: Flags.string({ char: 'v', description: 'ROCm release', required: true, helpValue: 'X.Y.Z' }),
    format: Flags.string({ description: 'output format', options: ['text', 'dot'], default: 'text' }),
    manifest: manifestFlag,
  };

  async run(): Promise<{ version: string; order: string[]; edges: { from: string; to: string; classes: string[]; testOnly: boolean }[] }> {
    const { flags } = await this.parse(Graph);
    const manifest = await loadManifestOrFail(flags.manifest);
    const model = await stackFor(manifest, flags.version);
    const graph = buildGraph(model);
    if (!this.jsonEnabled()) {
      process.stdout.write(flags.format === 'dot' ? toDot(graph, `ROCm ${flags.version}`) : toText(graph));
    }
    return { version: flags.version, order: graph.order, edges: graph.edges };
  }
}
