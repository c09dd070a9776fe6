import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { JsonResponse } from './http';

type Schema = Record<string, unknown>;
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
}

/** Forbids undocumented properties everywhere in a schema of /openapi.json (for validating real answers). */
export function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, strict(v)]));
  if (copy.type === 'object' && copy.properties && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

/**
 * Every answer checked against `/openapi.json`: the status must be documented for the route and
 * method, and the body must match its schema with no property the document does not name.
 */
export class OpenApiConformance {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction | null>();
  private readonly templates: { pattern: RegExp; template: string; params: number }[];

  constructor(private readonly doc: OpenApiDocument) {
    addFormats(this.ajv);
    this.templates = Object.keys(doc.paths)
      .map((template) => ({
        template,
        params: (template.match(/\{/g) ?? []).length,
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }))
      .sort((a, b) => a.params - b.params);
  }

  static async load(baseUrl: string): Promise<OpenApiConformance> {
    const res = await fetch(`${baseUrl}/openapi.json`);
    if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
    return new OpenApiConformance((await res.json()) as OpenApiDocument);
  }

  check(method: string, url: string, res: JsonResponse): void {
    const path = new URL(url, 'http://x').pathname;
    const template = this.templates.find((t) => t.pattern.test(path))?.template;
    if (!template) throw new Error(`${method} ${path} is not in /openapi.json`);
    const key = `${method} ${template} ${res.status}`;
    if (!this.validators.has(key)) {
      const response = this.doc.paths[template]?.[method.toLowerCase()]?.responses[String(res.status)];
      if (!response) throw new Error(`${key} is not in /openapi.json (body: ${JSON.stringify(res.body)})`);
      const schema = response.content?.['application/json']?.schema;
      this.validators.set(key, schema ? this.ajv.compile({ ...(strict(schema) as Schema), components: strict(this.doc.components) }) : null);
    }
    const validate = this.validators.get(key);
    if (validate === null) {
      if (res.body !== undefined) throw new Error(`${key} documents no body but one came: ${JSON.stringify(res.body)}`);
      return;
    }
    if (validate && !validate(res.body)) {
      throw new Error(`${key}: the body does not match /openapi.json: ${JSON.stringify(validate.errors)} in ${JSON.stringify(res.body)}`);
    }
  }
}

