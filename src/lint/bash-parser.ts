// The parser lives in ebuild/, below lint/, so that what reads an ebuild's text
// (bump, stack-check, lint) shares it without importing lint; this name is kept
// for the modules that still import it from here.
export * from '../ebuild/bash-parser.js';
