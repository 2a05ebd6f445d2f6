/** What the ebuilds a package holds need from its metadata.xml. */
export interface MetadataNeeds {
  /** Local USE flags with their descriptions (the newest version's wording). */
  flags: Map<string, string>;
  /** GitHub repositories the sources come from (remote-id type="github"). */
  repos: string[];
  /** bugs-to of the newest version, if any. */
  bugsTo?: string;
}

/** What the manifest ever generated for the package, in any release: only these may be taken out. */
export interface MetadataKnown {
  flags: ReadonlySet<string>;
  repos: ReadonlySet<string>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const unesc = (s: string) => s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/**
 * An overlay's metadata.xml brought to the versions its package holds after
 * a bump: a flag or remote-id the held ebuilds need is added, one that only
 * versions no longer held needed (a flag some release declared, a
 * repository some release fetched from) is taken out, and bugs-to follows
 * the newest version when it was ours. Everything else, hand edits
 * included (a maintainer, a description reworded, a remote-id of another
 * kind), is kept byte for byte. Returns the text unchanged when nothing is
 * to do.
 */
export function refreshMetadata(text: string, needs: MetadataNeeds, known: MetadataKnown): string {
  let out = text;
  // <use>: drop flags no held version has, add the missing ones.
  const flagRe = /^([ \t]*)<flag name="([^"]+)"[^>]*>[\s\S]*?<\/flag>\n/gm;
  const present = new Set<string>();
  out = out.replace(flagRe, (line, _indent: string, name: string) => {
    present.add(name);
    return !needs.flags.has(name) && known.flags.has(name) ? '' : line;
  });
  const missingFlags = [...needs.flags].filter(([name]) => !present.has(name));
  for (const [name, description] of missingFlags) {
    const line = `\t\t<flag name="${esc(name)}">${esc(description)}</flag>\n`;
    // In name order among the flags there, as rendered metadata.xml has them.
    const after = [...out.matchAll(/^[ \t]*<flag name="([^"]+)"/gm)].find((m) => m[1]! > name);
    if (after) out = out.slice(0, after.index) + line + out.slice(after.index);
    else if (/<\/use>/.test(out)) out = out.replace(/[ \t]*<\/use>/, (close) => `${line}${close}`);
    else out = insertBlock(out, `\t<use>\n${line}\t</use>\n`, /[ \t]*<upstream>|<\/pkgmetadata>/);
  }
  out = out.replace(/^[ \t]*<use>\n[ \t]*<\/use>\n/m, '');
  // <upstream>: github remote-ids and bugs-to.
  const idRe = /^[ \t]*<remote-id type="github">([^<]+)<\/remote-id>\n/gm;
  const ids = new Set<string>();
  out = out.replace(idRe, (line, id: string) => {
    const repo = unesc(id);
    ids.add(repo);
    return !needs.repos.includes(repo) && known.repos.has(repo) ? '' : line;
  });
  const missingIds = needs.repos.filter((r) => !ids.has(r));
  if (missingIds.length > 0) {
    const lines = missingIds.map((r) => `\t\t<remote-id type="github">${esc(r)}</remote-id>\n`).join('');
    // After the last remote-id, else first in <upstream>, else a new <upstream>.
    const last = [...out.matchAll(/^[ \t]*<remote-id [^\n]*\n/gm)].at(-1);
    if (last) out = out.slice(0, last.index + last[0].length) + lines + out.slice(last.index + last[0].length);
    else if (/<upstream>\n/.test(out)) out = out.replace(/<upstream>\n/, (open) => `${open}${lines}`);
    else out = insertBlock(out, `\t<upstream>\n${lines}\t</upstream>\n`, /<\/pkgmetadata>/);
  }
  if (needs.bugsTo) {
    out = out.replace(/(<bugs-to>)([^<]*)(<\/bugs-to>)/, (whole, open: string, url: string, close: string) => {
      const ours = [...known.repos].some((r) => unesc(url) === `https://github.com/${r}/issues`);
      return ours ? `${open}${esc(needs.bugsTo!)}${close}` : whole;
    });
  }
  return out;
}

function insertBlock(text: string, block: string, before: RegExp): string {
  const m = before.exec(text);
  if (!m) return text;
  const at = text.lastIndexOf('\n', m.index) + 1;
  return text.slice(0, at) + block + text.slice(at);
}
