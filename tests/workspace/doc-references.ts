import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize } from 'node:path';
import * as ts from 'typescript';

/**
 * The repository stands alone: its docs and comments name only files it holds. This module finds
 * what breaks that, over a list of files (the spec runs it on the repository, and on fixtures to
 * show it fails):
 * - a Markdown link (relative) whose file or heading does not exist;
 * - a repository path (`libs/…`, `docs/…`, `tools/…`, `apps/…`, `tests/…`, `k8s/…`, `docker/…`,
 *   `.ci/…`) in a Markdown file, or in a comment of code, that names no file or folder;
 * - any mention of the specification or design notes kept outside the repository (a file name
 *   or a section number of theirs): say the rule itself, or point at a file of the repository.
 */

export interface TextFile {
  /** Relative to the repository root, with `/`. */
  path: string;
  text: string;
}

/** What the checks may ask of the repository: a path's existence, a Markdown file's text. */
export interface Repository {
  exists(path: string): boolean;
  read(path: string): string | undefined;
}

/** Extensions of the files checked; Markdown is checked whole, code in its comments. */
const CODE = new Set(['.ts', '.tsx', '.js', '.mjs', '.cjs']);
const HASH_COMMENTED = new Set(['.yaml', '.yml', '.sh']);
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.nx', '.data', 'coverage', 'artifacts']);

/** A path of the repository, as docs and comments write it. */
const REPO_PATH = /(?<![\w@./~-])((?:apps|libs|tools|docs|tests|k8s|docker|\.ci)\/[\w.\-/]*[\w/-])/g;
/** Names that look like paths and are not: the MCP methods `tools/list` and `tools/call`. */
const NOT_PATHS = new Set(['tools/list', 'tools/call']);
/** A placeholder or glob after the path (`tools/bench/<name>`, `tests/api/change-detector*.ts`): not one file. */
const PATTERN_AFTER = /^[<{*$…[]/;
/** The external documents by name, with or without `.md` (`SPEC rule 4`, `DESIGN §5`, `SPEC.md`). */
const EXTERNAL = /\b(SPEC|DESIGN)\b(\.md)?/g;
/** A bare section number (`§7`): of a document outside the repository unless it names a standard (`RFC 9110 §13.1.2`). */
const SECTION = /(?<!RFC \d+ )§\s*\d/g;
const MARKDOWN_LINK = /\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

/** Every checked file of the repository under `root`. */
export function repositoryFiles(root: string): TextFile[] {
  const files: TextFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(path);
      } else if (entry.isFile() && isChecked(path)) {
        files.push({ path, text: readFileSync(join(root, path), 'utf8') });
      }
    }
  };
  walk('');
  return files;
}

/** The repository on disk. */
export function diskRepository(root: string): Repository {
  return {
    exists: (path) => existsSync(join(root, path)),
    read: (path) => {
      const full = join(root, path);
      return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
    },
  };
}

function isChecked(path: string): boolean {
  const ext = extname(path);
  return ext === '.md' || CODE.has(ext) || HASH_COMMENTED.has(ext) || path === '.ci/run' || /(^|\/)Dockerfile[^/]*$/.test(path);
}

/** The problems of `files`, one line each: `path:line: what`. */
export function referenceProblems(files: readonly TextFile[], repo: Repository): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const report = (offset: number, message: string) => problems.push(`${file.path}:${lineAt(file.text, offset)}: ${message}`);
    for (const match of file.text.matchAll(EXTERNAL)) {
      report(match.index, `names ${match[0]}, a document outside the repository: state the rule, or point at a file of the repository`);
    }
    for (const match of file.text.matchAll(SECTION)) {
      report(match.index, `${match[0]}: a section number of a document outside the repository (name an RFC, or a file of the repository)`);
    }
    const markdown = extname(file.path) === '.md';
    for (const [offset, text] of markdown ? [[0, file.text] as const] : commentsOf(file)) {
      for (const match of text.matchAll(REPO_PATH)) {
        const after = text.slice(match.index + match[0].length);
        if (PATTERN_AFTER.test(after)) continue;
        const path = match[1].replace(/\/+$/, '');
        if (!NOT_PATHS.has(path) && !repo.exists(path)) report(offset + match.index, `${path} is not in the repository`);
      }
    }
    if (markdown) {
      for (const match of file.text.matchAll(MARKDOWN_LINK)) {
        const problem = linkProblem(file.path, match[1], repo);
        if (problem) report(match.index, problem);
      }
    }
  }
  return problems;
}

/** A relative link's target file and heading, from the linking file's folder. */
function linkProblem(from: string, target: string, repo: Repository): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:
  const [pathPart, anchor] = target.split('#', 2);
  const path = pathPart ? normalize(join(dirname(from), decodeURIComponent(pathPart))).replace(/\\/g, '/') : from;
  if (path.startsWith('..')) return `link ${target} leaves the repository`;
  if (!repo.exists(path)) return `link ${target}: ${path} is not in the repository`;
  if (anchor && path.endsWith('.md')) {
    const text = repo.read(path) ?? '';
    if (!headingSlugs(text).has(anchor)) return `link ${target}: ${path} has no heading #${anchor}`;
  }
  return undefined;
}

/** GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, spaces → `-`, repeats numbered). */
export function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  return slugs;
}

/** The comments of a file, each with its offset in the file. */
function commentsOf(file: TextFile): [number, string][] {
  const ext = extname(file.path);
  if (CODE.has(ext)) {
    // Parsed, so that a `//` in a string, a regular expression or a template is not a comment.
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, false);
    const found = new Map<number, string>();
    const collect = (ranges: ts.CommentRange[] | undefined) => {
      for (const range of ranges ?? []) found.set(range.pos, file.text.slice(range.pos, range.end));
    };
    const visit = (node: ts.Node) => {
      collect(ts.getLeadingCommentRanges(file.text, node.pos));
      collect(ts.getTrailingCommentRanges(file.text, node.end));
      for (const child of node.getChildren(source)) visit(child);
    };
    visit(source);
    return [...found.entries()];
  }
  // `#` comments: from a `#` at a line's start or after a space.
  const comments: [number, string][] = [];
  for (const match of file.text.matchAll(/(^|\s)#[^\n]*/g)) comments.push([match.index, match[0]]);
  return comments;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
