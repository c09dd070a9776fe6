import { join } from 'node:path';
import { diskRepository, headingSlugs, referenceProblems, Repository, repositoryFiles, TextFile } from './doc-references';

const ROOT = join(__dirname, '..', '..');

/** This checker and its spec name the outside documents and broken paths on purpose (the fixtures). */
const SELF = new Set(['tests/workspace/doc-references.ts', 'tests/workspace/doc-references.spec.ts']);

/** A repository of a few files in memory. */
function fixture(files: Record<string, string>): { files: TextFile[]; repo: Repository } {
  const paths = Object.keys(files);
  return {
    files: Object.entries(files).map(([path, text]) => ({ path, text })),
    repo: {
      exists: (path) => paths.some((p) => p === path || p.startsWith(`${path}/`)),
      read: (path) => files[path],
    },
  };
}

describe('docs and comments name only what the repository holds', () => {
  it('every link, path and reference of the repository resolves', () => {
    const files = repositoryFiles(ROOT).filter((f) => !SELF.has(f.path));
    expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(['README.md', 'docs/api/ingestion.md', 'libs/contracts/src/observations/observation.schema.ts']));
    expect(referenceProblems(files, diskRepository(ROOT))).toEqual([]);
  });

  describe('the checker, on a broken copy', () => {
    const broken = fixture({
      'README.md': [
        '# Title',
        'See [ingestion](docs/api/ingestion.md), [gone](docs/api/gone.md) and [a heading](docs/api/ingestion.md#message-body).',
        'A [wrong heading](docs/api/ingestion.md#no-such-heading), [outside](../elsewhere.md) and [the web](https://example.com/x.md).',
        'Code in `libs/contracts/src/observations`, not in `libs/contracts/src/observation`; `tools/bench/<name>` is a pattern.',
        'The observation format of DESIGN.md §7, and SPEC rule 4.',
      ].join('\n'),
      'docs/api/ingestion.md': '# Ingestion\n\n## Message body\n\nSee [the README](../../README.md).\n',
      'libs/contracts/src/observations/observation.schema.ts': [
        "/** The observation (docs/api/ingestion.md); its rules in `docs/api/missing.md`. */",
        "export const where = 'libs/not/a/comment.ts'; // but this is: tools/gone/main.ts",
        'const re = /\\/\\/ libs\\/in-a-regex/; /* block: apps/nowhere */',
        'const t = `${re.source} // libs/in-a-template`;',
        '// The SPEC Limits say so.',
        '// As §5 says; RFC 9110 §13.1.2 is a standard, not ours.',
      ].join('\n'),
      'k8s/base/kustomization.yaml': '# see docs/ops.md\nresources: []\n',
    });

    it('reports each broken link, path and outside reference, with its line', () => {
      expect(referenceProblems(broken.files, broken.repo).sort()).toEqual([
        'README.md:2: link docs/api/gone.md: docs/api/gone.md is not in the repository',
        'README.md:3: link docs/api/ingestion.md#no-such-heading: docs/api/ingestion.md has no heading #no-such-heading',
        'README.md:3: link ../elsewhere.md leaves the repository',
        'README.md:2: docs/api/gone.md is not in the repository',
        'README.md:4: libs/contracts/src/observation is not in the repository',
        'README.md:5: names DESIGN.md, a document outside the repository: state the rule, or point at a file of the repository',
        'README.md:5: names SPEC, a document outside the repository: state the rule, or point at a file of the repository',
        'README.md:5: §7: a section number of a document outside the repository (name an RFC, or a file of the repository)',
        'libs/contracts/src/observations/observation.schema.ts:1: docs/api/missing.md is not in the repository',
        'libs/contracts/src/observations/observation.schema.ts:2: tools/gone/main.ts is not in the repository',
        'libs/contracts/src/observations/observation.schema.ts:3: apps/nowhere is not in the repository',
        'libs/contracts/src/observations/observation.schema.ts:5: names SPEC, a document outside the repository: state the rule, or point at a file of the repository',
        'libs/contracts/src/observations/observation.schema.ts:6: §5: a section number of a document outside the repository (name an RFC, or a file of the repository)',
        'k8s/base/kustomization.yaml:1: docs/ops.md is not in the repository',
      ].sort());
    });

    it('passes the same files once fixed', () => {
      const fixed = fixture({
        'README.md': '# Title\nSee [a heading](docs/api/ingestion.md#message-body) and `libs/contracts/src/observations`.\n',
        'docs/api/ingestion.md': '# Ingestion\n\n## Message body\n',
        'libs/contracts/src/observations/observation.schema.ts': "/** The observation (docs/api/ingestion.md). */\nexport const SPEC_FILE = /x/;\n",
      });
      expect(referenceProblems(fixed.files, fixed.repo)).toEqual([]);
    });
  });

  it('makes the anchors GitHub makes of headings', () => {
    expect([...headingSlugs('# Ingest\n## The HTTP edge\n## Keyword search (live)\n```\n# not a heading\n```\n## The HTTP edge\n')]).toEqual([
      'ingest',
      'the-http-edge',
      'keyword-search-live',
      'the-http-edge-1',
    ]);
  });
});
