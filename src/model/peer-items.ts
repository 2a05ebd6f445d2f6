/**
 * Whether a `differences:` entry's item names an item `upstream peer`
 * reports: the same text, or a pattern where `*` stands for any run of
 * characters (one argument for many files the peer edits alike, such as
 * "filter_file tests/cpp_api/*\/CMakeLists.txt").
 */
export function itemMatches(pattern: string, item: string): boolean {
  if (!pattern.includes('*')) return pattern === item;
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(item);
}
