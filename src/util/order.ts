/**
 * Strings in code-point order, the same on every machine. String's
 * localeCompare follows the user's locale (LANG, LC_ALL): with cs_CZ "cholmod"
 * sorts after "hwloc", with cy_GB "thread" after "tzdata", so an ebuild's IUSE,
 * a metadata.xml or a report would differ between two maintainers' machines.
 * Code-point order is also how Portage and pkgcheck (Python's sort) and `ls`
 * in the C locale order names. And the first localeCompare in a process
 * builds ICU's collator, 10-15 ms here.
 */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
