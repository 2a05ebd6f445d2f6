/**
 * The one place peers/ takes its ebuild-reading parts from: the bash parser
 * (tree-sitter-bash, the grammar pkgcheck uses) and the word expansions of
 * an ebuild's globals. Kept in one module so that moving those parts to
 * another layer changes one import here.
 */
export { parseBash, type Node } from '../../ebuild/bash-parser.js';
export { expandWord, portageVars, Unevaluable, type EbuildIdentity } from '../../ebuild/src-uri.js';
export type { EbuildVars, RawAssignment } from '../../ebuild/vars.js';
export { evaluateWord, type Helpers } from '../replay/bash-words.js';
export { parseSedArgs } from '../replay/sed-command.js';
