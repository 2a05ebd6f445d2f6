// Exit codes live in util/ so that every layer can name them; commands keep importing them here.
export { ExitCode, type ExitCodeValue } from '../util/exit-codes.js';
