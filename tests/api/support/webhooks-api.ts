import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { JsonResponse, request } from './http';
import { strict } from './openapi-schema';

type Schema = Record<string, unknown>;
interface Operation {
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const TEMPLATES: [RegExp, string][] = [
  [/^\/webhooks\/[^/]+\/deliveries\/[^/]+\/retry$/, '/webhooks/{id}/deliveries/{deliveryId}/retry'],
  [/^\/webhooks\/[^/]+\/deliveries$/, '/webhooks/{id}/deliveries'],
  [/^\/webhooks\/[^/]+\/secret\/rotate$/, '/webhooks/{id}/secret/rotate'],
  [/^\/webhooks\/[^/]+\/test$/, '/webhooks/{id}/test'],
  [/^\/webhooks\/[^/]+\/recover$/, '/webhooks/{id}/recover'],
  [/^\/webhooks\/[^/]+$/, '/webhooks/{id}'],
  [/^\/webhooks$/, '/webhooks'],
];

/**
 * The webhook routes as a client calls them, every answer checked against `/openapi.json`: the
 * status must be documented for the route and method, and the body must match its schema with no
 * property the document does not name.
 */
export class WebhooksApi {
  private readonly validators = new Map<string, ValidateFunction | null>();
  private readonly ajv = new Ajv({ strict: false, allErrors: true });

  private constructor(
    readonly baseUrl: string,
    private readonly doc: OpenApiDocument,
  ) {
    addFormats(this.ajv);
  }

  static async open(baseUrl: string): Promise<WebhooksApi> {
    const res = await request(`${baseUrl}/openapi.json`);
    if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
    return new WebhooksApi(baseUrl, res.body as OpenApiDocument);
  }

  async call(apiKey: string | null, method: string, url: string, body?: unknown, raw?: string): Promise<JsonResponse> {
    const headers: Record<string, string> = {};
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json';
    const res = await request(`${this.baseUrl}${url}`, {
      method,
      headers,
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    this.conform(method, url, res);
    return res;
  }

  get = (key: string | null, url: string) => this.call(key, 'GET', url);
  post = (key: string | null, url: string, body?: unknown) => this.call(key, 'POST', url, body);
  patch = (key: string | null, url: string, body: unknown) => this.call(key, 'PATCH', url, body);
  delete = (key: string | null, url: string) => this.call(key, 'DELETE', url);

  private conform(method: string, url: string, res: JsonResponse): void {
    const path = url.split('?')[0];
    const template = TEMPLATES.find(([pattern]) => pattern.test(path))?.[1];
    if (!template) throw new Error(`not a webhook route: ${path}`);
    const key = `${method} ${template} ${res.status}`;
    if (!this.validators.has(key)) {
      const operation = this.doc.paths[template]?.[method.toLowerCase()];
      const response = operation?.responses[String(res.status)];
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
