export { parseEclassDoc, type DocProblem, type DocText, type EclassDoc, type FunctionDoc, type VariableDoc } from './parse.js';
export { scanCode, prefixOf, type CodeFacts, type Definition } from './code.js';
export { checkEclassDoc, type EclassDocResult } from './check.js';
export { renderMarkdown, renderMan, type RenderOptions } from './render.js';
export { sourcedVariableProblems } from './sourced.js';
