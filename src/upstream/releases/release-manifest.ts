import { SaxesParser } from 'saxes';

/** One <project> of AMD's repo-tool release manifest (ROCm/ROCm's default.xml). */
export interface ReleaseProject {
  name: string;
  /** Checkout path; the name when the manifest gives none. */
  path: string;
  groups: string[];
  /** The repository URL: the remote's fetch base + name. */
  url?: string;
}

export interface ReleaseManifest {
  /** The default revision, e.g. "refs/tags/rocm-6.3.3". */
  revision?: string;
  projects: ReleaseProject[];
}

export class ReleaseManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReleaseManifestError';
  }
}

/**
 * Reads a repo-tool manifest: <remote>, <default>, <project> and
 * <remove-project>, in document order, with a real XML parser (comments,
 * entities and either quote style handled; malformed XML is an error naming
 * the line).
 */
export function parseReleaseManifest(xml: string, label = 'default.xml'): ReleaseManifest {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const remotes = new Map<string, string>();
  let defaultRemote: string | undefined;
  let revision: string | undefined;
  let sawManifest = false;
  const projects: (ReleaseProject & { remote?: string })[] = [];
  let error: Error | undefined;
  parser.on('error', (e) => {
    error ??= e;
  });
  parser.on('opentag', (tag) => {
    const a = tag.attributes as Record<string, string>;
    switch (tag.name) {
      case 'manifest':
        sawManifest = true;
        break;
      case 'remote':
        if (a.name && a.fetch) remotes.set(a.name, a.fetch);
        break;
      case 'default':
        defaultRemote = a.remote ?? defaultRemote;
        revision = a.revision ?? revision;
        break;
      case 'project':
        if (!a.name) throw new ReleaseManifestError(`${label}:${parser.line}: <project> without a name`);
        projects.push({ name: a.name, path: a.path ?? a.name, groups: (a.groups ?? '').split(/[\s,]+/).filter(Boolean), ...(a.remote ? { remote: a.remote } : {}) });
        break;
      case 'remove-project': {
        const i = projects.findIndex((p) => p.name === a.name);
        if (i >= 0) projects.splice(i, 1);
        break;
      }
      default:
        break;
    }
  });
  try {
    parser.write(xml).close();
  } catch (e) {
    error ??= e as Error;
  }
  if (error) throw error instanceof ReleaseManifestError ? error : new ReleaseManifestError(`${label}: not a valid XML manifest: ${error.message.split('\n')[0]}`);
  if (!sawManifest) throw new ReleaseManifestError(`${label}: no <manifest> element`);
  return {
    ...(revision ? { revision } : {}),
    projects: projects.map(({ remote, ...p }) => {
      const base = remotes.get(remote ?? defaultRemote ?? '');
      return { ...p, ...(base ? { url: `${base.replace(/\/?$/, '/')}${p.name}` } : {}) };
    }),
  };
}
