import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, AnySchemaObject } from 'ajv';
import { schemasDir } from '../paths.js';
import type { ManifestIssue } from './issues.js';
import { jsonPath, locate, pointerSegments, writtenText, type YamlSource } from './yaml-source.js';
import { closest } from '../util/closest.js';

// Kept importable from here: the checks that suggest a name import it with the validator.
export { closest };

type AjvInstance = InstanceType<typeof Ajv>;
type ValidateFunction = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** ajv as the validator uses it; `source` keeps the generated code (for build-validators). */
export function newAjv(options: { source?: boolean } = {}): AjvInstance {
  const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
  const ajv = new AjvClass({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true, ...(options.source ? { code: { source: true } } : {}) });
  ajv.addKeyword({ keyword: 'x-hint', schemaType: 'string' });
  return ajv;
}

/** Every schema of `dir` (and the derived partial component schema), with a digest of the files. */
export function loadSchemas(dir = schemasDir): { list: AnySchemaObject[]; digest: string } {
  const hash = createHash('sha256');
  const list: AnySchemaObject[] = [];
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.schema.json')).sort()) {
    const text = readFileSync(path.join(dir, name), 'utf8');
    hash.update(`${name}\0${text}\0`);
    const schema = JSON.parse(text) as AnySchemaObject;
    list.push(schema);
    if (name === 'component.schema.json') list.push(partialComponentSchema(schema));
    if (name === TEST_REPORT_SCHEMA) list.push(noGpuReportSchema(schema));
  }
  return { list, digest: hash.digest('hex') };
}

/** Where `npm run build` writes the validation code ajv generates (build-validators.ts). */
export const GENERATED_VALIDATORS = fileURLToPath(new URL('./validators.generated.cjs', import.meta.url));

export function generatedValidators(digest: string): Record<string, ValidateFunction> | undefined {
  try {
    const mod = createRequire(import.meta.url)(GENERATED_VALIDATORS) as { schemasDigest?: string; validators?: Record<string, ValidateFunction> };
    return mod.schemasDigest === digest ? mod.validators : undefined;
  } catch {
    return undefined;
  }
}

export const SCHEMA_BASE = 'https://rocm-ebuild.invalid/schemas/';

/** Keys of a component that may be partially given inside `overrides[].set`. */
const MERGEABLE_DEFINITIONS = ['cmake', 'targets', 'llvm', 'python', 'tests', 'phases', 'phaseCode', 'useFlagSpec'];

let shared: SchemaValidator | undefined;

/** Issues of one validation, and the paths of the broken values. */
export interface Checked {
  issues: ManifestIssue[];
  broken: (string | number)[][];
}

/**
 * Validates parsed YAML against the JSON schemas in schemas/ and turns ajv's
 * errors into issues with file:line:column, a JSON path and a hint taken from
 * the schema's own `x-hint` annotations.
 */
export class SchemaValidator {
  constructor(dir = schemasDir, options: { generated?: boolean } = {}) {
    const schemas = loadSchemas(dir);
    for (const schema of schemas.list) this.byId.set(String(schema.$id), schema);
    // The validation code generated at build time (npm run build), when it was
    // generated from these very schemas; else ajv compiles them here. ajv is
    // loaded only then, not by runs that take a checked manifest from the cache.
    const generated = options.generated === false ? undefined : generatedValidators(schemas.digest);
    if (generated) {
      this.getValidator = (id) => generated[id.slice(SCHEMA_BASE.length)];
    } else {
      const ajv = newAjv();
      for (const schema of schemas.list) ajv.addSchema(schema);
      this.getValidator = (id) => ajv.getSchema(id) as ValidateFunction | undefined;
    }
  }

  private readonly getValidator: (id: string) => ValidateFunction | undefined;
  private readonly byId = new Map<string, AnySchemaObject>();

  /** The (sub)schema a `$ref` names: a schema's $id and a JSON pointer fragment, as ajv resolves them. */
  private schemaAt(ref: string): AnySchemaObject | undefined {
    const [id, fragment = ''] = ref.split('#');
    let s: unknown = this.byId.get(id!);
    for (const seg of fragment.split('/').slice(1)) {
      if (typeof s !== 'object' || s === null) return undefined;
      s = (s as Record<string, unknown>)[decodeURIComponent(seg).replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return typeof s === 'object' && s !== null ? (s as AnySchemaObject) : undefined;
  }

  /**
   * Whether an override may remove the key at the end of `segments` (a path
   * in a value of `schema`) with `null`: its parent is an object schema that
   * names the key without requiring it, or a map (additionalProperties or
   * patternProperties). `false` also where the position is not an object
   * member at all (a list item) or cannot be told.
   */
  removable(schema: string, segments: readonly (string | number)[]): boolean {
    let at = this.resolve(this.byId.get(`${SCHEMA_BASE}${schema}`), `${SCHEMA_BASE}${schema}`);
    for (const [i, seg] of segments.entries()) {
      if (!at || typeof seg !== 'string') return false;
      const props = (at.schema.properties ?? {}) as Record<string, AnySchemaObject>;
      const last = i === segments.length - 1;
      if (last) {
        if (seg in props) return !((at.schema.required as string[] | undefined) ?? []).includes(seg);
        return isMapSchema(at.schema);
      }
      const next = props[seg] ?? (isMapSchema(at.schema) ? mapValueSchema(at.schema) : undefined);
      at = next ? this.resolve(next, at.base) : undefined;
    }
    return false;
  }

  /** Follow `$ref`s (relative to `base`, the schema file they are written in) to the schema itself. */
  private resolve(schema: AnySchemaObject | undefined, base: string): { schema: AnySchemaObject; base: string } | undefined {
    let s = schema;
    let b = base;
    for (let hops = 0; s && typeof s.$ref === 'string' && hops < 16; hops++) {
      const ref = s.$ref as string;
      const absolute = ref.startsWith('#') ? `${b.split('#')[0]}${ref}` : new URL(ref, b).href;
      b = absolute.split('#')[0]!;
      s = this.schemaAt(absolute);
    }
    return s ? { schema: s, base: b } : undefined;
  }

  /**
   * The validation function of one schema of schemas/ (or a derived one) by
   * file name, e.g. TEST_REPORT_SCHEMA: the build's generated code when it is
   * current, as for the manifest, instead of an ajv compile per use.
   */
  validatorOf(schema: string): ValidateFunction {
    const v = this.getValidator(`${SCHEMA_BASE}${schema}`);
    if (!v) throw new Error(`no schema ${schema} in ${schemasDir}`);
    return v;
  }

  static shared(): SchemaValidator {
    shared ??= new SchemaValidator();
    return shared;
  }

  /** Validate `value` (by default the whole file) found at `segments` in `source`. */
  validate(
    schema: string,
    source: YamlSource,
    value: unknown = source.value,
    segments: readonly (string | number)[] = [],
    context = '',
  ): ManifestIssue[] {
    return this.validateDetailed(schema, source, value, segments, context).issues;
  }

  /**
   * As `validate`, also returning the path of every broken value (relative to
   * `value`; a missing or unknown key's path ends in that key), so callers can
   * set aside just the broken parts and go on checking the rest.
   */
  validateDetailed(
    schema: string,
    source: YamlSource,
    value: unknown = source.value,
    segments: readonly (string | number)[] = [],
    context = '',
  ): Checked {
    // A whole parsed file is validated once per schema, however often it is loaded
    // (tests and long-running callers share parsed files between runs).
    const whole = value === source.value && segments.length === 0 && context === '';
    const cached = whole ? this.results.get(source)?.get(schema) : undefined;
    if (cached) return cached;
    const result = this.run(schema, source, value, segments, context);
    if (whole) {
      const bySchema = this.results.get(source) ?? new Map<string, Checked>();
      bySchema.set(schema, result);
      this.results.set(source, bySchema);
    }
    return result;
  }

  private readonly results = new WeakMap<YamlSource, Map<string, Checked>>();

  private run(
    schema: string,
    source: YamlSource,
    value: unknown,
    segments: readonly (string | number)[],
    context: string,
  ): Checked {
    const validate = this.getValidator(SCHEMA_BASE + schema);
    if (!validate) throw new Error(`schema ${schema} is not loaded`);
    if (validate(value)) return { issues: [], broken: [] };
    const errors = validate.errors ?? [];
    const broken = errors.map((e) => {
      const at = pointerSegments(e.instancePath);
      const p = e.params as { missingProperty?: string; additionalProperty?: string; propertyName?: string };
      const key = p.missingProperty ?? p.additionalProperty ?? p.propertyName;
      return key !== undefined ? [...at, key] : at;
    });
    return { issues: this.toIssues(errors, source, segments, context), broken };
  }

  private toIssues(
    errors: ErrorObject[],
    source: YamlSource,
    base: readonly (string | number)[],
    context: string,
  ): ManifestIssue[] {
    // A failed oneOf also reports every branch's own failure; those are noise
    // next to the oneOf's summary, so drop errors below a oneOf's path.
    const oneOfPaths = errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath);
    const kept = errors.filter(
      (e) =>
        e.keyword === 'oneOf' ||
        !oneOfPaths.some((p) => e.instancePath === p || e.instancePath.startsWith(`${p}/`)),
    );
    // `if`/`not` produce a second, vaguer error for the same place.
    const meaningful = kept.filter((e) => e.keyword !== 'if' && e.keyword !== 'not');
    const issues: ManifestIssue[] = [];
    const seen = new Set<string>();
    for (const e of meaningful.length > 0 ? meaningful : kept) {
      const segments = [...base, ...pointerSegments(e.instancePath)];
      const issue = this.describe(e, source, segments, context);
      const key = `${issue.path}\u0000${issue.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      issues.push(issue);
    }
    return issues;
  }

  private describe(
    e: ErrorObject,
    source: YamlSource,
    segments: (string | number)[],
    context: string,
  ): ManifestIssue {
    const said = this.explain(e, source, segments);
    const where = said.where ?? segments;
    const message = context ? `${said.message} (${context})` : said.message;
    const hint = said.hint ?? 'see docs/manifest.md for what this key takes';
    const pos = locate(source, said.key !== undefined ? segments : where, said.key);
    return { file: source.file, line: pos.line, column: pos.column, path: jsonPath(where), message, ...(hint ? { hint } : {}) };
  }

  /**
   * What one ajv error means in the manifest's words, with a hint: the
   * schema's own `x-hint` where it has one, else what the keyword suggests.
   * `where` and `key` are set when the error is about a key of the value
   * rather than the value itself.
   */
  private explain(e: ErrorObject, source: YamlSource, segments: (string | number)[]): Explained {
    const parent = e.parentSchema as AnySchemaObject | undefined;
    const hint = this.hintOf(parent);
    switch (e.keyword) {
      case 'required': {
        const missing = (e.params as { missingProperty: string }).missingProperty;
        const prop = (parent?.properties as Record<string, AnySchemaObject> | undefined)?.[missing];
        return { message: `missing required key \`${missing}\``, hint: this.hintOf(prop) ?? `add \`${missing}:\`` };
      }
      case 'additionalProperties':
        return unknownKey(e, parent, segments, hint);
      case 'enum':
        return notAllowed(e, hint);
      case 'not':
        // `{ not: {} }` marks a key that is no longer used; its x-hint says what replaced it.
        return { message: `\`${String(segments.at(-1))}\` is no longer used`, hint };
      case 'pattern':
        return { message: `${show(e.data)} is not of the expected form`, hint: hint ?? `must match ${(e.params as { pattern: string }).pattern}` };
      case 'type':
        return wrongType(e, source, segments, hint);
      case 'propertyNames': {
        const name = (e.params as { propertyName: string }).propertyName;
        // The rule for keys (an atom, a USE flag, a version) carries the useful hint.
        const pattern = (e.schema as AnySchemaObject | undefined)?.pattern;
        const keyHint = this.hintOf(e.schema as AnySchemaObject) ?? hint ?? (typeof pattern === 'string' ? `keys here must match ${pattern}` : undefined);
        return { message: `key \`${name}\` is not allowed here`, hint: keyHint, key: name, where: [...segments, name] };
      }
      case 'oneOf':
        return { message: `${show(e.data)} matches none of the accepted forms`, hint };
      case 'minLength':
      case 'maxLength':
      case 'minItems':
      case 'maxItems':
      case 'minProperties':
      case 'maxProperties':
      case 'minimum':
      case 'maximum':
        return outOfLimit(e, hint);
      default:
        return { message: `${e.message ?? 'invalid value'}`, hint };
    }
  }

  private hintOf(schema: AnySchemaObject | undefined): string | undefined {
    let s = schema;
    for (let i = 0; s && i < 5; i++) {
      if (typeof s['x-hint'] === 'string') return s['x-hint'];
      if (typeof s.$ref !== 'string') return undefined;
      const ref = s.$ref.startsWith('#') ? undefined : new URL(s.$ref, SCHEMA_BASE).href;
      s = ref ? this.schemaAt(ref) : undefined;
    }
    return undefined;
  }
}

/** An ajv error in the manifest's words (SchemaValidator.explain). */
interface Explained {
  message: string;
  hint: string | undefined;
  /** The key the error is about, when it is a key of the value. */
  key?: string;
  /** The path to report, when not the value's own. */
  where?: (string | number)[];
}

/** additionalProperties: a key the schema does not have, with the closest one it has. */
function unknownKey(e: ErrorObject, parent: AnySchemaObject | undefined, segments: (string | number)[], hint: string | undefined): Explained {
  const key = (e.params as { additionalProperty: string }).additionalProperty;
  const allowed = Object.keys((parent?.properties as object | undefined) ?? {});
  const close = closest(key, allowed);
  return {
    message: `unknown key \`${key}\``,
    hint: close ? `did you mean \`${close}\`?` : allowed.length > 0 ? `allowed keys here: ${allowed.join(', ')}` : hint,
    key,
    where: [...segments, key],
  };
}

/** enum: a value not in the list, with the closest one that is. */
function notAllowed(e: ErrorObject, hint: string | undefined): Explained {
  const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.map(String);
  const close = typeof e.data === 'string' ? closest(e.data, allowed) : undefined;
  return { message: `${show(e.data)} is not one of ${allowed.join(', ')}`, hint: close ? `did you mean \`${close}\`?` : (hint ?? `use one of: ${allowed.join(', ')}`) };
}

/** type: what was expected, and for a number or boolean where text belongs, the value quoted as written. */
function wrongType(e: ErrorObject, source: YamlSource, segments: (string | number)[], hint: string | undefined): Explained {
  const want = (e.params as { type: string | string[] }).type;
  const message = `expected ${Array.isArray(want) ? want.join(' or ') : want}, got ${typeName(e.data)} ${show(e.data)}`;
  if ((typeof e.data === 'number' || typeof e.data === 'boolean') && String(want).includes('string')) {
    // Quote what the user wrote: `6.10` is the number 6.1 to YAML, and "6.1" would be the wrong fix.
    const written = writtenText(source, segments) ?? String(e.data);
    return { message, hint: `quote the value so YAML keeps it a string: "${written}"` };
  }
  return { message, hint: hint ?? `write ${[want].flat().map((t) => TYPE_WORDS[t] ?? t).join(' or ')} here` };
}

/** min/max Length, Items, Properties, minimum/maximum: the size or value against its limit. */
function outOfLimit(e: ErrorObject, hint: string | undefined): Explained {
  const limit = (e.params as { limit: number }).limit;
  const what = e.keyword.endsWith('Length') ? 'characters' : e.keyword.endsWith('Items') ? 'entries' : e.keyword.endsWith('Properties') ? 'keys' : '';
  const min = e.keyword.startsWith('min');
  const at = min ? 'at least' : 'at most';
  return {
    message: what ? `${show(e.data)} has ${sizeOf(e.data)} ${what}; ${at} ${limit} ${min ? 'needed' : 'allowed'}` : `${show(e.data)} is ${min ? 'below' : 'above'} ${limit}`,
    hint: hint ?? (what ? `write ${at} ${limit} ${what}` : `use a number ${at} ${limit}`),
  };
}

/**
 * `overrides[].set` holds a partial component whose objects merge into the
 * base: the same schema, minus `required` on the component and on the
 * sections that merge (lists replace whole, so their items stay strict).
 */
function isMapSchema(s: AnySchemaObject): boolean {
  return (typeof s.additionalProperties === 'object' && s.additionalProperties !== null) || (typeof s.patternProperties === 'object' && s.patternProperties !== null);
}

function mapValueSchema(s: AnySchemaObject): AnySchemaObject | undefined {
  if (typeof s.additionalProperties === 'object' && s.additionalProperties !== null) return s.additionalProperties as AnySchemaObject;
  const patterns = Object.values((s.patternProperties ?? {}) as Record<string, AnySchemaObject>);
  return patterns.length === 1 ? patterns[0] : undefined;
}

/** The report `rocm-ebuild test` writes per GPU (and `pr body --tests` reads). */
export const TEST_REPORT_SCHEMA = 'test-report.schema.json';
/** Derived from it: the report of a run without a GPU (--gpu none, build-report.json), whose gfx is null. */
export const NO_GPU_REPORT_SCHEMA = 'test-report-no-gpu.schema.json';

function noGpuReportSchema(full: AnySchemaObject): AnySchemaObject {
  const copy = structuredClone(full) as AnySchemaObject & { properties: Record<string, unknown> };
  copy.$id = `${SCHEMA_BASE}${NO_GPU_REPORT_SCHEMA}`;
  copy.properties.gfx = { anyOf: [{ type: 'null' }, copy.properties.gfx] };
  return copy;
}

function partialComponentSchema(full: AnySchemaObject): AnySchemaObject {
  const copy = structuredClone(full) as AnySchemaObject & { definitions: Record<string, AnySchemaObject> };
  copy.$id = `${SCHEMA_BASE}component-partial.schema.json`;
  delete copy.required;
  for (const name of MERGEABLE_DEFINITIONS) {
    const def = copy.definitions[name];
    if (def) {
      delete def.required;
      delete def.minProperties;
    }
  }
  // A partial may not nest further overrides.
  delete (copy.properties as Record<string, unknown>).overrides;
  return copy;
}

function show(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

const TYPE_WORDS: Record<string, string> = {
  object: 'a mapping (key: value lines)',
  array: 'a list',
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  null: 'nothing',
};

function sizeOf(v: unknown): number {
  if (typeof v === 'string') return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (v && typeof v === 'object') return Object.keys(v).length;
  return 0;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'mapping';
  return typeof v;
}
