import { StructuredTypeOrmLogger, statementHead } from './typeorm-logger';

describe('StructuredTypeOrmLogger', () => {
  it('reports a failed statement as one JSON line without its parameters or the server message', () => {
    const lines: string[] = [];
    const logger = new StructuredTypeOrmLogger({ write: (line: string) => lines.push(line) });
    const error = Object.assign(new Error('invalid byte sequence for encoding "UTF8": secret-typed-value'), {
      code: '22021',
    });
    logger.logQueryError(error, 'SELECT name\n  FROM models WHERE make = $1', ['secret-typed-value']);
    const output = lines.join('');
    expect(output).not.toContain('secret-typed-value');
    expect(output).not.toContain('PARAMETERS');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'warn',
      msg: 'query failed',
      code: '22021',
      statement: 'SELECT name FROM models WHERE make = $1',
    });
  });

  it('keeps only the head of a long statement', () => {
    expect(statementHead(`SELECT ${'x, '.repeat(100)}`)).toHaveLength(80);
  });
});
