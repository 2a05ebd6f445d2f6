// Loading a checked manifest and a release of it lives in stack-check/ (workflows use it too);
// commands keep importing it from here.
export { loadManifestOrFail, stackFor } from '../stack-check/index.js';

export { manifestFlag } from './manifest-flag.js';
