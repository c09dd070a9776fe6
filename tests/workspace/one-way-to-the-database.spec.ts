import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..', '..');

/** Product code: apps, libs and tools, without specs, migrations and the testing lib. */
const PRODUCT_ROOTS = ['apps', 'libs', 'tools'];
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const NOT_PRODUCT = [/\.d\.ts$/, /\.(spec|integration-spec|e2e-spec)\.ts$/, /(^|\/)migrations\//, /^libs\/testing\//];
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'coverage', '.nx']);

/** The one file that issues transaction statements (withTransaction), and the one lib that may open TypeORM transactions. */
const TRANSACTION_HELPER = 'libs/persistence/src/pg.ts';
const PERSISTENCE_LIB = 'libs/persistence/';

/**
 * A transaction statement at the start of a string or after a `;` in it: BEGIN, START
 * TRANSACTION, COMMIT, ROLLBACK (TO), ABORT, SAVEPOINT, RELEASE SAVEPOINT. A word that only
 * shares the keyword (`ON COMMIT DELETE ROWS`, "Begin the load") is not one, nor a lowercase
 * word alone (`'commit'`, `'abort'`: event names); SQL in any case is, when more follows.
 */
function statementPattern(end: string, flags: string): RegExp {
  const alternatives = [
    String.raw`BEGIN(?:\s+(?:TRANSACTION|WORK|ISOLATION|READ|NOT|DEFERRABLE)\b|${end})`,
    String.raw`START\s+TRANSACTION\b`,
    String.raw`COMMIT(?:\s+(?:TRANSACTION|WORK|AND|PREPARED)\b|${end})`,
    String.raw`(?:ROLLBACK|ABORT)(?:\s+(?:TRANSACTION|WORK|AND|TO|PREPARED)\b|${end})`,
    String.raw`(?:RELEASE\s+)?SAVEPOINT\s+\w+(?:${end})`,
  ];
  return new RegExp(String.raw`(?:^|;)\s*(?:${alternatives.join('|')})`, flags);
}
const STATEMENT_ANY_CASE = statementPattern(String.raw`\s*;`, 'i');
const STATEMENT_UPPERCASE = statementPattern(String.raw`\s*(?:;|$)`, '');

/** Receivers whose `.transaction(…)` opens a TypeORM transaction (a DataSource, an EntityManager). */
const TYPEORM_RECEIVER = /(data_?source|manager|connection|^ds|^db)$/i;

export function isTransactionStatement(text: string): boolean {
  return STATEMENT_ANY_CASE.test(text) || STATEMENT_UPPERCASE.test(text);
}

function productFiles(directory: string, out: string[] = []): string[] {
  for (const entry of readdirSync(join(ROOT, directory), { withFileTypes: true })) {
    const path = `${directory}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) productFiles(path, out);
    } else if (SOURCE_FILE.test(entry.name) && !NOT_PRODUCT.some((pattern) => pattern.test(path))) {
      out.push(path);
    }
  }
  return out;
}

interface Finding {
  file: string;
  line: number;
  text: string;
}

/** The strings of a file that hold a transaction statement, and its calls that open a TypeORM transaction. */
function scan(file: string, text = readFileSync(join(ROOT, file), 'utf8')): { statements: Finding[]; typeormTransactions: Finding[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const statements: Finding[] = [];
  const typeormTransactions: Finding[] = [];
  const at = (node: ts.Node): Finding => ({
    file,
    line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
    text: node.getText(source).slice(0, 120),
  });
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (isTransactionStatement(node.text)) statements.push(at(node));
    } else if (ts.isTemplateExpression(node)) {
      // Substitutions read as a word, so `SAVEPOINT ${name}` is still a statement.
      const text = [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' x ');
      if (isTransactionStatement(text)) statements.push(at(node));
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const receiver = node.expression.expression;
      const receiverName = ts.isPropertyAccessExpression(receiver) ? receiver.name.text : receiver.getText(source);
      if (method === 'startTransaction' || (method === 'transaction' && TYPEORM_RECEIVER.test(receiverName))) {
        typeormTransactions.push(at(node));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { statements, typeormTransactions };
}

const describeFinding = (f: Finding) => `${f.file}:${f.line}  ${f.text}`;

/**
 * One way to run statements as a unit: `withTransaction` of libs/persistence (a retried
 * transaction on a pool, a savepoint on the client of a caller's transaction). No other product
 * file issues BEGIN, COMMIT, ROLLBACK or SAVEPOINT, or opens a TypeORM transaction.
 */
describe('one way to the database', () => {
  const files = PRODUCT_ROOTS.flatMap((root) => productFiles(root));
  const scanned = new Map(files.map((file) => [file, scan(file)]));

  it.each([
    ['BEGIN', true],
    ['BEGIN;', true],
    ['BEGIN; SET LOCAL jit = off', true],
    ['begin transaction isolation level serializable', true],
    ['START TRANSACTION READ ONLY', true],
    ['COMMIT', true],
    ['  COMMIT;', true],
    ['ROLLBACK', true],
    ['ROLLBACK TO SAVEPOINT nested_work; RELEASE SAVEPOINT nested_work', true],
    ['SAVEPOINT nested_work', true],
    ['RELEASE SAVEPOINT nested_work', true],
    ['SELECT 1; COMMIT', true],
    ['CREATE TEMP TABLE stage (id int) ON COMMIT DELETE ROWS', false],
    ['CREATE TEMP TABLE stage (id int) ON COMMIT DROP', false],
    ['begin; set local jit = off', true],
    ['savepoint nested_work;', true],
    ['Begin the load', false],
    ['commit', false],
    ['abort', false],
    ['commitUsage', false],
    ['SELECT 1', false],
  ])('reads %j as a transaction statement: %s', (text, expected) => {
    expect(isTransactionStatement(text)).toBe(expected);
  });

  it('scans the product code, the transaction helper included', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(scanned.get(TRANSACTION_HELPER)?.statements.length).toBeGreaterThan(0);
    expect(files.some((file) => file.includes('.spec.') || file.includes('/migrations/') || file.startsWith('libs/testing/'))).toBe(false);
  });

  it('issues BEGIN, COMMIT, ROLLBACK and SAVEPOINT only in the transaction helper', () => {
    const offenders = [...scanned.entries()]
      .filter(([file]) => file !== TRANSACTION_HELPER)
      .flatMap(([, found]) => found.statements);
    expect(offenders.map(describeFinding)).toEqual([]);
  });

  it('opens TypeORM transactions nowhere outside libs/persistence', () => {
    const offenders = [...scanned.entries()]
      .filter(([file]) => !file.startsWith(PERSISTENCE_LIB))
      .flatMap(([, found]) => found.typeormTransactions);
    expect(offenders.map(describeFinding)).toEqual([]);
  });

  it('reports what a file would do wrong, and nothing else', () => {
    const probe = scan(
      'probe.ts',
      [
        "await client.query('BEGIN');",
        'await client.query(`SAVEPOINT ${name}`);',
        "await client.query(`CREATE TEMP TABLE s (id int) ON COMMIT DELETE ROWS`);",
        '// COMMIT in a comment',
        'await dataSource.transaction(work);',
        'await runner.startTransaction();',
        'await this.repository.transaction(work);',
      ].join('\n'),
    );
    expect(probe.statements.map((f) => f.line)).toEqual([1, 2]);
    expect(probe.typeormTransactions.map((f) => f.line)).toEqual([5, 6]);
  });
});
