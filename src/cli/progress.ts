// Progress display lives in util/ so that lower layers can report progress without importing the CLI.
export { createProgress, useColor, type Progress, type ProgressOptions } from '../util/progress.js';
