import { execFileSync } from 'node:child_process';

/** The code a run measured: the commit, and whether src/ had uncommitted changes on top. */
export interface Revision {
  commit: string;
  srcModified: boolean;
}

export function describeRevision(root: string): Revision {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  try {
    return {
      commit: git('rev-parse', 'HEAD'),
      srcModified: git('status', '--porcelain', '--', 'src').length > 0,
    };
  } catch {
    return { commit: 'unknown', srcModified: true };
  }
}
