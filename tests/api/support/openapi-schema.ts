/** Forbids undocumented properties everywhere in a schema of /openapi.json (for validating real answers). */
export function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, strict(v)]));
  if (copy.type === 'object' && copy.properties && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}
