import { Type } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { unrecognised, validatePlain } from '@cars/contracts';

/**
 * A tool's input is the REST route's parameters, read from the same DTO classes: their
 * `@ApiProperty` metadata is what the OpenAPI document's parameters are generated from (so the
 * tool's JSON Schema states the same limits and enums), and their class-validator rules are what
 * the ValidationPipe checks (so a bad argument gets the same message as the REST `details`).
 */
export interface ToolInput<T extends object = object> {
  dto: Type<T>;
  /** Where the REST route takes these parameters from. */
  in: 'path' | 'query';
}

/** One property of a tool's input schema (JSON Schema). */
export interface JsonSchemaProperty {
  type: 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  examples?: unknown[];
}

/** A tool's `inputSchema`: an object of the route's parameters, nothing else. */
export interface ToolInputSchema {
  [key: string]: unknown;
  type: 'object';
  properties: Record<string, JsonSchemaProperty>;
  required?: string[];
  additionalProperties: false;
}

/** `@ApiProperty` options as @nestjs/swagger stores them on the DTO's prototype. */
interface ApiPropertyMetadata {
  type?: unknown;
  enum?: unknown;
  required?: boolean;
  isArray?: boolean;
  description?: string;
  example?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
}

/** The keywords an OpenAPI parameter schema and a JSON Schema property share unchanged. */
const SHARED_KEYWORDS = ['minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'format', 'default'] as const;

/** The properties a DTO documents, in declaration order (inherited ones first). */
export function documentedProperties(dto: Type<object>): string[] {
  const names = (Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES_ARRAY, dto.prototype) ?? []) as string[];
  return [...new Set(names.map((name) => name.replace(/^:/, '')))];
}

function metadataOf(dto: Type<object>, property: string): ApiPropertyMetadata {
  return (Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, dto.prototype, property) ?? {}) as ApiPropertyMetadata;
}

function schemaType(dto: Type<object>, property: string, meta: ApiPropertyMetadata): JsonSchemaProperty['type'] {
  if (meta.isArray) throw new Error(`${dto.name}.${property}: array parameters are not supported by MCP tool inputs`);
  const { type } = meta;
  if (type === String || (type === undefined && Array.isArray(meta.enum))) return 'string';
  if (type === Number) return 'number';
  if (type === Boolean) return 'boolean';
  if (type === 'string' || type === 'integer' || type === 'number' || type === 'boolean') return type;
  throw new Error(`${dto.name}.${property}: parameter type ${String(type)} is not supported by MCP tool inputs`);
}

/** The JSON Schema of a tool taking these DTOs' parameters. */
export function toolInputSchema(inputs: readonly ToolInput[]): ToolInputSchema {
  const properties: Record<string, JsonSchemaProperty> = {};
  const required: string[] = [];
  for (const { dto } of inputs) {
    for (const name of documentedProperties(dto)) {
      if (name in properties) throw new Error(`${dto.name}.${name}: a parameter of that name is already in the tool's input`);
      const meta = metadataOf(dto, name);
      const property: JsonSchemaProperty = { type: schemaType(dto, name, meta) };
      if (meta.description !== undefined) property.description = meta.description;
      if (Array.isArray(meta.enum)) property.enum = [...(meta.enum as unknown[])];
      for (const keyword of SHARED_KEYWORDS) {
        if (meta[keyword] !== undefined) Object.assign(property, { [keyword]: meta[keyword] });
      }
      if (meta.example !== undefined) property.examples = [meta.example];
      properties[name] = property;
      if (meta.required !== false) required.push(name);
    }
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

export type ToolInputOutcome = { ok: true; values: object[] } | { ok: false; details: Record<string, string[]> };

/**
 * A tool's arguments → one validated DTO instance per input, as the REST route's ValidationPipe
 * would hand them to the controller, or the `details` of the REST 400. Like the pipe, the inputs
 * are validated one at a time and the first that fails is reported alone — the query before the
 * path (Nest resolves a route's `@Query()` before its `@Param()`; tests/api/mcp.integration-spec.ts
 * compares the answers). Arguments no input declares go to the (last) query input, which names
 * them ("… is not a recognised parameter"). `null` means "not given". Path parameters arrive in
 * a URL as text: a number given for one is taken in its text form.
 */
export function parseToolInput(inputs: readonly ToolInput[], args: Record<string, unknown> | undefined): ToolInputOutcome {
  const given = Object.entries(args ?? {}).filter(([, value]) => value !== null);
  if (inputs.length === 0) {
    // A route without parameters (GET /makes): what the strict-query guard answers.
    if (given.length === 0) return { ok: true, values: [] };
    return { ok: false, details: Object.fromEntries(given.map(([name]) => [name, [unrecognised(name, 'parameter')]])) };
  }
  const owner = new Map<string, number>();
  inputs.forEach(({ dto }, index) => documentedProperties(dto).forEach((name) => owner.set(name, index)));
  const queryIndex = inputs.map((input) => input.in).lastIndexOf('query');
  const plains: Record<string, unknown>[] = inputs.map(() => ({}));
  for (const [name, value] of given) {
    const index = owner.get(name) ?? (queryIndex >= 0 ? queryIndex : inputs.length - 1);
    const fromPath = inputs[index].in === 'path' && (typeof value === 'number' || typeof value === 'boolean');
    plains[index][name] = fromPath ? String(value) : value;
  }
  // A REST path always has its parameters; a tool call may leave one out.
  const missing = inputs
    .filter((input) => input.in === 'path')
    .flatMap(({ dto }) => documentedProperties(dto).filter((name) => !given.some(([key]) => key === name)));
  if (missing.length > 0) return { ok: false, details: Object.fromEntries(missing.map((name) => [name, [`${name} is required`]])) };
  const values: object[] = [];
  const order = [...inputs.keys()].sort((a, b) => Number(inputs[a].in === 'path') - Number(inputs[b].in === 'path'));
  for (const index of order) {
    const outcome = validatePlain(inputs[index].dto, plains[index]);
    if (!outcome.ok) return { ok: false, details: outcome.details };
    values[index] = outcome.value;
  }
  return { ok: true, values };
}
