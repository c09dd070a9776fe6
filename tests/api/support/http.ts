export interface JsonResponse {
  status: number;
  headers: Headers;
  // Response bodies are asserted field by field in the specs.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** One HTTP request, the body parsed as JSON when there is one. */
export async function request(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export function bearer(apiKey: string): RequestInit {
  return { headers: { authorization: `Bearer ${apiKey}` } };
}
