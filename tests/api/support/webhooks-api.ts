import { JsonResponse, request } from './http';
import { OpenApiConformance } from './openapi-schema';

/**
 * The webhook routes as a client calls them, every answer checked against `/openapi.json`: the
 * status must be documented for the route and method, and the body must match its schema with no
 * property the document does not name.
 */
export class WebhooksApi {
  private constructor(
    readonly baseUrl: string,
    private readonly conformance: OpenApiConformance,
  ) {}

  static async open(baseUrl: string): Promise<WebhooksApi> {
    const res = await request(`${baseUrl}/openapi.json`);
    if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
    return new WebhooksApi(baseUrl, new OpenApiConformance(res.body as ConstructorParameters<typeof OpenApiConformance>[0]));
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
    if (!/^\/webhooks(\/|$)/.test(path)) throw new Error(`not a webhook route: ${path}`);
    this.conformance.check(method, path, res);
  }
}
