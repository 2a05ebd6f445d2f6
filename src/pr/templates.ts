/**
 * The checklists the repositories we open pull requests against ask for,
 * in our own words. Boxes stay unchecked: ticking them is the contributor's
 * statement, not the tool's.
 *
 * - gentoo (::gentoo on GitHub): GLEP 76 copyright policy, a Signed-off-by
 *   on every commit, the Council's AI policy, `pkgcheck scan --commits --net`.
 * - guru (GURU): the same, plus GURU's rules, build logs, and Bugzilla
 *   addresses for new maintainers; its pull requests go to the dev branch.
 */

export type TemplateName = 'gentoo' | 'guru' | 'none';
export const TEMPLATE_NAMES: TemplateName[] = ['gentoo', 'guru', 'none'];

export interface PrTemplate {
  name: TemplateName;
  checklist: string[];
  /** A line under the checklist. */
  note?: string;
  /** The branch pull requests are opened against, when the repository prefers one. */
  baseBranch?: string;
}

const GLEP76 = 'https://www.gentoo.org/glep/glep-0076.html#certificate-of-origin';
const AI_POLICY = 'https://wiki.gentoo.org/wiki/Project:Council/AI_policy';
const GURU_RULES = 'https://wiki.gentoo.org/wiki/Project:GURU#Rules';

const COMMON = [
  `I have the right to submit this work under Gentoo's [copyright policy (GLEP 76)](${GLEP76}).`,
  'Every commit of this pull request carries my `Signed-off-by` line, certifying the above.',
  `No part of this contribution was produced with natural-language AI tools, as Gentoo's [AI policy](${AI_POLICY}) requires.`,
  '`pkgcheck scan --commits --net` reports no problems with these commits.',
];

export const TEMPLATES: Record<TemplateName, PrTemplate> = {
  gentoo: {
    name: 'gentoo',
    checklist: COMMON,
    note: 'Every box must be ticked before the pull request can be merged.',
  },
  guru: {
    name: 'guru',
    checklist: [
      `I have read [GURU's rules](${GURU_RULES}) and follow them.`,
      ...COMMON,
      'The build logs of every package added or changed here are attached.',
      'Every e-mail address added to a metadata.xml belongs to a [Gentoo Bugzilla](https://bugs.gentoo.org/) account whose bug mail is read (or none was added).',
    ],
    note: 'Every box must be ticked before the pull request can be merged. GURU merges into its `dev` branch.',
    baseBranch: 'dev',
  },
  none: { name: 'none', checklist: [] },
};

/** Which template a repository wants, from the GitHub repository or the overlay's repo_name. */
export function templateFor(github: { owner: string; repo: string } | undefined, repoName: string | undefined): TemplateName {
  const slug = github ? `${github.owner}/${github.repo}`.toLowerCase() : '';
  if (slug === 'gentoo/gentoo' || repoName === 'gentoo') return 'gentoo';
  if (slug === 'gentoo/guru' || repoName === 'guru') return 'guru';
  return 'none';
}
