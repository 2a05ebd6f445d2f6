import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { writeFileAtomically } from '../util/atomic-write.js';
import { GENERATED_VALIDATORS, loadSchemas, newAjv, SCHEMA_BASE } from './schema-validator.js';

/**
 * Compiles the schemas with ajv at build time (npm run build) and writes the
 * validation code ajv generates, so runs do not compile them at start. The
 * file carries the digest of the schemas it came from: SchemaValidator uses
 * it only for those very schemas, and compiles them itself otherwise.
 */
export async function writeGeneratedValidators(file = GENERATED_VALIDATORS): Promise<void> {
  const { list, digest } = loadSchemas();
  const ajv = newAjv({ source: true });
  for (const schema of list) ajv.addSchema(schema);
  const ids = Object.fromEntries(list.map((s) => [String(s.$id).slice(SCHEMA_BASE.length), String(s.$id)]));
  const standalone = (createRequire(import.meta.url)('ajv/dist/standalone') as { default: (ajv: unknown, refs: Record<string, string>) => string }).default;
  const code = standalone(ajv, ids);
  // standalone code exports each validator under its name; gathered, with the digest.
  const text = `${code}\nexports.validators = { ${Object.keys(ids).map((k) => `${JSON.stringify(k)}: exports[${JSON.stringify(k)}]`).join(', ')} };\nexports.schemasDigest = ${JSON.stringify(digest)};\n`;
  await writeFileAtomically(file, text);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await writeGeneratedValidators();
