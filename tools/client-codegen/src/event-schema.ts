import * as ts from 'typescript';

/** A JSON Schema (2020-12) node. */
export type JsonSchema = { [key: string]: unknown };

export const EVENT_SCHEMA_ID = '/schemas/events.json';

const KEYWORDS = new Map<ts.SyntaxKind, string>([
  [ts.SyntaxKind.StringKeyword, 'string'],
  [ts.SyntaxKind.NumberKeyword, 'number'],
  [ts.SyntaxKind.BooleanKeyword, 'boolean'],
]);

/**
 * The webhook events' JSON Schema (2020-12), derived from the event contract's TypeScript source
 * (`libs/contracts/src/events/event-envelope.ts`): one definition per event type (the envelope
 * `EventEnvelope<T>` with `T` bound to that type, its sample as `examples`) and one per interface
 * it refers to, with the property comments as descriptions. Read from the syntax (what the
 * contract says, e.g. `Integer` rather than `number`), with the type checker only to list the keys
 * of a mapped type. A construct it does not know fails the generation, naming it.
 */
export function renderEventSchema(source: string, samples: Record<string, unknown>): JsonSchema {
  const host = ts.createCompilerHost({ strict: true, noEmit: true, types: [] });
  const name = '/contract/event-envelope.ts';
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, version, ...rest) => (fileName === name ? ts.createSourceFile(fileName, source, version, true) : getSourceFile(fileName, version, ...rest));
  const program = ts.createProgram([name], { strict: true, noEmit: true, types: [], lib: ['lib.es2022.d.ts'] }, host);
  const file = program.getSourceFile(name)!;
  const checker = program.getTypeChecker();

  const declarations = new Map<string, ts.InterfaceDeclaration | ts.TypeAliasDeclaration>();
  const constants = new Map<string, ts.Expression>();
  for (const statement of file.statements) {
    if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) declarations.set(statement.name.text, statement);
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name) && d.initializer) constants.set(d.name.text, d.initializer);
    }
  }
  const defs: Record<string, JsonSchema> = {};
  const fail = (node: ts.Node, what: string): never => {
    throw new Error(`event schema: cannot express ${what} (${node.getText(file)}); extend tools/client-codegen/src/event-schema.ts`);
  };
  const describe = (node: ts.Node): string | undefined => {
    const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
    const text = docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '').join('\n').trim();
    return text ? text.replace(/\s*\n\s*/g, ' ') : undefined;
  };
  const stringOf = (expression: ts.Expression): string => {
    const inner = ts.isAsExpression(expression) ? expression.expression : expression;
    return ts.isStringLiteral(inner) ? inner.text : fail(expression, 'a constant that is not a string literal');
  };

  type Env = Map<string, ts.TypeNode | string>;
  const members = (elements: readonly ts.TypeElement[], env: Env): JsonSchema => {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const member of elements) {
      if (!ts.isPropertySignature(member) || !member.type) return fail(member, 'a member that is not a typed property');
      const key = member.name.getText(file).replace(/^'|'$/g, '');
      const description = describe(member);
      properties[key] = { ...(description ? { description } : {}), ...convert(member.type, env) };
      if (!member.questionToken) required.push(key);
    }
    return { type: 'object', properties, required };
  };
  /** The type node of an interface's property (for `X['name']`). */
  const propertyType = (owner: string, key: string, at: ts.Node): ts.TypeNode => {
    const declaration = declarations.get(owner);
    if (!declaration || !ts.isInterfaceDeclaration(declaration)) return fail(at, `an indexed access into ${owner}`);
    const member = declaration.members.find((m) => ts.isPropertySignature(m) && m.name.getText(file).replace(/^'|'$/g, '') === key);
    return member && ts.isPropertySignature(member) && member.type ? member.type : fail(at, `${owner}['${key}']`);
  };
  const literalOf = (node: ts.TypeNode, env: Env): string | undefined => {
    if (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) return node.literal.text;
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
      const bound = env.get(node.typeName.text);
      if (typeof bound === 'string') return bound;
      if (bound) return literalOf(bound, env);
    }
    return undefined;
  };

  function convert(node: ts.TypeNode, env: Env): JsonSchema {
    const keyword = KEYWORDS.get(node.kind);
    if (keyword) return { type: keyword };
    if (ts.isLiteralTypeNode(node)) {
      if (node.literal.kind === ts.SyntaxKind.NullKeyword) return { type: 'null' };
      if (ts.isStringLiteral(node.literal)) return { const: node.literal.text };
      return fail(node, 'a literal type other than a string or null');
    }
    if (ts.isUnionTypeNode(node)) {
      const parts = node.types.map((t) => convert(t, env));
      const simple = parts.every((p) => Object.keys(p).length === 1 && typeof p.type === 'string');
      return simple ? { type: parts.map((p) => p.type) } : { anyOf: parts };
    }
    if (ts.isTypeLiteralNode(node)) return members(node.members, env);
    if (ts.isTypeQueryNode(node) && ts.isIdentifier(node.exprName)) {
      const value = constants.get(node.exprName.text);
      return value ? { const: stringOf(value) } : fail(node, 'typeof of an unknown constant');
    }
    if (ts.isIndexedAccessTypeNode(node) && ts.isTypeReferenceNode(node.objectType) && ts.isIdentifier(node.objectType.typeName)) {
      const key = literalOf(node.indexType, env);
      if (key === undefined) return fail(node, 'an indexed access by a key that is not a literal');
      return convert(propertyType(node.objectType.typeName.text, key, node), env);
    }
    if (ts.isMappedTypeNode(node) && node.type && node.typeParameter.constraint) {
      const keys = checker.getTypeFromTypeNode(node.typeParameter.constraint);
      const literals = (keys.isUnion() ? keys.types : [keys]).map((k) => (k.isStringLiteral() ? k.value : fail(node, 'a mapped type over keys that are not string literals')));
      const properties: Record<string, JsonSchema> = {};
      for (const key of literals) properties[key] = convert(node.type, new Map(env).set(node.typeParameter.name.text, key));
      return { type: 'object', properties, ...(node.questionToken ? {} : { required: literals }), additionalProperties: false };
    }
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
      const name = node.typeName.text;
      const bound = env.get(name);
      if (typeof bound === 'string') return { const: bound };
      if (bound) return convert(bound, env);
      if (name === 'Integer') return { type: 'integer' };
      const declaration = declarations.get(name);
      if (!declaration) return fail(node, `the type ${name}, which the contract does not declare`);
      const params = declaration.typeParameters ?? [];
      if (params.length > 0) {
        // A generic: inlined with its arguments bound.
        const args = node.typeArguments ?? [];
        const inner: Env = new Map(env);
        params.forEach((p, i) => inner.set(p.name.text, args[i] ?? p.default ?? fail(node, `${name} without its type argument`)));
        return ts.isInterfaceDeclaration(declaration) ? members(declaration.members, inner) : convert(declaration.type, inner);
      }
      if (!(name in defs)) {
        defs[name] = {}; // placeholder against cycles
        const description = describe(declaration);
        const body = ts.isInterfaceDeclaration(declaration) ? members(declaration.members, new Map()) : convert(declaration.type, new Map());
        defs[name] = { ...(description ? { description } : {}), ...body };
      }
      return { $ref: `#/$defs/${name}` };
    }
    return fail(node, `a ${ts.SyntaxKind[node.kind]}`);
  }

  const byType = declarations.get('EventDataByType');
  const envelope = declarations.get('EventEnvelope');
  if (!byType || !ts.isInterfaceDeclaration(byType) || !envelope || !ts.isInterfaceDeclaration(envelope)) {
    throw new Error('event schema: the contract must declare the interfaces EventDataByType and EventEnvelope<T>');
  }
  const typeParameter = envelope.typeParameters?.[0]?.name.text ?? fail(envelope, 'EventEnvelope without its type parameter');
  const eventTypes = byType.members.map((m) => m.name?.getText(file).replace(/^'|'$/g, '') ?? fail(m, 'an unnamed member'));
  const events: Record<string, JsonSchema> = {};
  for (const type of eventTypes) {
    const sample = samples[type];
    if (sample === undefined) throw new Error(`event schema: no sample of ${type} in EVENT_SAMPLES`);
    events[type] = { title: type, ...members(envelope.members, new Map([[typeParameter, type]])), examples: [sample] };
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: EVENT_SCHEMA_ID,
    title: 'Webhook events',
    description:
      'The body of every webhook delivery (Standard Webhooks), one definition per event type under $defs, selected by `type`. ' +
      'Generated from libs/contracts/src/events/event-envelope.ts; documented in docs/api/events.md. Receivers should ignore fields they do not know.',
    oneOf: eventTypes.map((type) => ({ $ref: `#/$defs/${type}` })),
    $defs: { ...events, ...defs },
  };
}

/** The generated contract file the gateway serves at /schemas/events.json. */
export const EVENT_SCHEMA_FILE = 'libs/contracts/src/events/event-schema.generated.ts';
/** The event catalog; its samples and schema sit between these markers and are generated. */
export const EVENT_CATALOG = 'docs/api/events.md';
const BEGIN = '<!-- BEGIN GENERATED by tools/client-codegen: samples and schema. Do not edit; run `npx nx run client-codegen:generate`. -->';
const END = '<!-- END GENERATED -->';

export function renderEventSchemaFile(schema: JsonSchema, headerLine: string): string {
  return (
    `${headerLine}\n` +
    '/** The JSON Schema of the webhook events (served at /schemas/events.json; catalog: docs/api/events.md). */\n' +
    `export const EVENT_SCHEMA: { readonly [key: string]: unknown } = ${JSON.stringify(schema, null, 2)};\n`
  );
}

/** The catalog with its generated part (a sample of each type, then the whole schema) brought up to date. */
export function renderEventCatalog(current: string, schema: JsonSchema): string {
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${EVENT_CATALOG}: the markers of the generated part are missing`);
  const defs = schema.$defs as Record<string, JsonSchema>;
  const types = (schema.oneOf as { $ref: string }[]).map((one) => one.$ref.slice('#/$defs/'.length));
  const parts = types.map((type) => {
    const sample = (defs[type]?.examples as unknown[])[0];
    return `### \`${type}\`\n\n\`\`\`json\n${JSON.stringify(sample, null, 2)}\n\`\`\`\n`;
  });
  const generated = [
    BEGIN,
    '',
    ...parts,
    '### The JSON Schema',
    '',
    `Served at \`${EVENT_SCHEMA_ID}\`:`,
    '',
    '<details><summary>events.json</summary>',
    '',
    '```json',
    JSON.stringify(schema, null, 2),
    '```',
    '',
    '</details>',
    '',
    END,
  ].join('\n');
  return `${current.slice(0, start)}${generated}${current.slice(end + END.length)}`;
}
