/**
 * Names that other programs constrain, checked by their own grammars before
 * they reach a command line or a generated CI definition: a value that is not
 * one of these is refused with what it should look like, never quoted into
 * working shape.
 */

/**
 * A container image reference as the distribution spec's grammar defines it
 * (docker.io/gentoo/stage3:amd64-openrc, registry:5000/x/y@sha256:…): lower
 * case path components, an optional registry host and port, a tag of at most
 * 128 word characters, a digest. Nothing that starts with "-", holds a space
 * or anything a shell or YAML would act on can match.
 */
const DOMAIN_COMPONENT = '(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])';
const DOMAIN = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG = '[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const IMAGE = new RegExp(`^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::${TAG})?(?:@${DIGEST})?$`);

export function isImageReference(ref: string): boolean {
  const name = ref.split('@')[0]!.replace(/:[^/]*$/, '');
  return ref.length <= 512 && name.length <= 255 && IMAGE.test(ref);
}

export const IMAGE_REFERENCE_FORMAT = 'an image reference such as docker.io/gentoo/stage3:amd64-openrc (registry/path:tag, or @sha256:… for a digest)';

/** Kubernetes object names (PersistentVolumeClaims): a DNS-1123 subdomain, at most 253 characters. */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/.test(name);
}

/** Kubernetes namespaces: a DNS-1123 label, at most 63 characters. */
export function isDnsLabel(name: string): boolean {
  return name.length <= 63 && /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/.test(name);
}

/** A Kubernetes label key: an optional DNS subdomain prefix and "/", then a name of at most 63 characters. */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix === '' || !isDnsSubdomain(prefix))) return false;
  return isLabelValue(name) && name !== '';
}

/** A Kubernetes label value: at most 63 characters, alphanumeric at both ends, - _ . inside. */
export function isLabelValue(value: string): boolean {
  return value.length <= 63 && /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(value);
}

/** A runner label as GitHub and GitLab write them: letters, digits and - _ . (no spaces, no expressions). */
export function isRunnerLabel(label: string): boolean {
  return label.length > 0 && label.length <= 100 && /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(label);
}

/**
 * A git URL a CI job may clone: https, http, ssh or git URLs, or scp-like
 * user@host:path. No transport that runs a command (ext::), no local path,
 * nothing that starts with "-", no whitespace or control characters.
 */
export function isGitUrl(url: string): boolean {
  if (url.length > 2048 || /[\s\x00-\x1f\x7f-\x9f'"`\\$]/.test(url) || url.includes('${{')) return false;
  if (/^(?:https?|ssh|git):\/\/[A-Za-z0-9]/.test(url)) return true;
  return /^[A-Za-z0-9_.-]+@[A-Za-z0-9][A-Za-z0-9.-]*:[A-Za-z0-9_~./-]+$/.test(url);
}

/** An https URL for a download (a source tarball). */
export function isHttpsUrl(url: string): boolean {
  return url.length <= 2048 && /^https:\/\/[A-Za-z0-9][^\s\x00-\x1f\x7f-\x9f'"`\\$]*$/.test(url) && !url.includes('${{');
}

/** GitHub Actions evaluates `${{ … }}` anywhere in a workflow's values: text from outside must not hold it. */
export function hasGithubExpression(text: string): boolean {
  return text.includes('${{');
}
