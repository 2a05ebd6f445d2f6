// The error type lives in util/ so that every layer can throw it; commands keep importing it here.
export { UserError } from '../util/errors.js';
