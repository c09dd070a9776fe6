import Ajv, { ErrorObject, ValidateFunction } from 'ajv';

/**
 * Schemas of the custom resources the manifests use (Prometheus Operator, monitoring.coreos.com/v1),
 * written from the operator's CRDs for the fields these manifests may set: an unknown field, a
 * missing required one or a wrong type is an error, as the API server's structural schema would
 * have it. kubernetes-models covers only the built-in kinds.
 */
const stringMap = { type: 'object', additionalProperties: { type: 'string' } };
const duration = { type: 'string', pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$' };
const labelSelector = {
  type: 'object',
  additionalProperties: false,
  properties: {
    matchLabels: stringMap,
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'operator'],
        properties: { key: { type: 'string' }, operator: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } },
      },
    },
  },
};
const metadata = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1 }, namespace: { type: 'string' }, labels: stringMap, annotations: stringMap },
};
const relabeling = {
  type: 'object',
  additionalProperties: false,
  properties: {
    action: { type: 'string' },
    modulus: { type: 'integer' },
    regex: { type: 'string' },
    replacement: { type: 'string' },
    separator: { type: 'string' },
    sourceLabels: { type: 'array', items: { type: 'string' } },
    targetLabel: { type: 'string' },
  },
};

/** The `spec` of each monitoring kind (Prometheus Operator), by `<apiVersion>/<kind>`. */
const SPEC_SCHEMAS: Record<string, object> = {
  'monitoring.coreos.com/v1/PrometheusRule': {
    type: 'object',
    additionalProperties: false,
    properties: {
      groups: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1 },
            interval: duration,
            query_offset: duration,
            limit: { type: 'integer' },
            partial_response_strategy: { type: 'string' },
            labels: stringMap,
            rules: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['expr'],
                properties: {
                  alert: { type: 'string' },
                  record: { type: 'string' },
                  expr: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
                  for: duration,
                  keep_firing_for: duration,
                  labels: stringMap,
                  annotations: stringMap,
                },
              },
            },
          },
        },
      },
    },
  },
  'monitoring.coreos.com/v1/PodMonitor': {
    type: 'object',
    additionalProperties: false,
    required: ['selector'],
    properties: {
      selector: labelSelector,
      namespaceSelector: {
        type: 'object',
        additionalProperties: false,
        properties: { any: { type: 'boolean' }, matchNames: { type: 'array', items: { type: 'string' } } },
      },
      jobLabel: { type: 'string' },
      podTargetLabels: { type: 'array', items: { type: 'string' } },
      sampleLimit: { type: 'integer', minimum: 0 },
      podMetricsEndpoints: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            port: { type: 'string' },
            portNumber: { type: 'integer', minimum: 1, maximum: 65535 },
            path: { type: 'string' },
            scheme: { enum: ['http', 'https'] },
            interval: duration,
            scrapeTimeout: duration,
            honorLabels: { type: 'boolean' },
            honorTimestamps: { type: 'boolean' },
            relabelings: { type: 'array', items: relabeling },
            metricRelabelings: { type: 'array', items: relabeling },
          },
        },
      },
    },
  },
};

/** The fields of a container's resources (requests and limits). */
const resources = {
  type: 'object',
  additionalProperties: false,
  properties: { requests: stringMap, limits: stringMap },
};

// The datastores of the optional operators overlay (k8s/overlays/operators): the fields it sets,
// checked by name and type, and the top of each spec closed, so a misspelt field fails here
// rather than being ignored by the operator.
const DATASTORE_SPEC_SCHEMAS: Record<string, object> = {
  'rabbitmq.com/v1beta1/RabbitmqCluster': {
    type: 'object',
    additionalProperties: false,
    required: ['replicas'],
    properties: {
      replicas: { type: 'integer', minimum: 1 },
      image: { type: 'string' },
      resources,
      persistence: { type: 'object', additionalProperties: false, properties: { storage: { type: 'string' }, storageClassName: { type: 'string' } } },
      rabbitmq: {
        type: 'object',
        additionalProperties: false,
        properties: { additionalConfig: { type: 'string' }, additionalPlugins: { type: 'array', items: { type: 'string' } } },
      },
      override: { type: 'object' },
      affinity: { type: 'object' },
      tls: { type: 'object' },
      service: { type: 'object' },
    },
  },
  'postgresql.cnpg.io/v1/Cluster': {
    type: 'object',
    additionalProperties: false,
    required: ['instances', 'storage'],
    properties: {
      instances: { type: 'integer', minimum: 1 },
      imageName: { type: 'string' },
      inheritedMetadata: { type: 'object', additionalProperties: false, properties: { labels: stringMap, annotations: stringMap } },
      bootstrap: { type: 'object' },
      postgresql: { type: 'object', additionalProperties: false, properties: { parameters: stringMap, pg_hba: { type: 'array', items: { type: 'string' } } } },
      resources,
      storage: { type: 'object', additionalProperties: false, required: ['size'], properties: { size: { type: 'string' }, storageClass: { type: 'string' } } },
      affinity: { type: 'object', additionalProperties: false, properties: { enablePodAntiAffinity: { type: 'boolean' }, topologyKey: { type: 'string' }, podAntiAffinityType: { enum: ['preferred', 'required'] } } },
      minSyncReplicas: { type: 'integer' },
      maxSyncReplicas: { type: 'integer' },
      primaryUpdateStrategy: { enum: ['unsupervised', 'supervised'] },
      monitoring: { type: 'object' },
      backup: { type: 'object' },
    },
  },
};

/** A custom resource (`<apiVersion>/<kind>`) whose `spec` has the given schema. */
function resourceSchema(key: string, spec: object): object {
  const kind = key.slice(key.lastIndexOf('/') + 1);
  const apiVersion = key.slice(0, key.lastIndexOf('/'));
  return {
    type: 'object',
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: { apiVersion: { const: apiVersion }, kind: { const: kind }, metadata, spec },
  };
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validators: Record<string, ValidateFunction> = Object.fromEntries(
  Object.entries({ ...SPEC_SCHEMAS, ...DATASTORE_SPEC_SCHEMAS }).map(([key, spec]) => [key, ajv.compile(resourceSchema(key, spec))]),
);

const describeError = (error: ErrorObject) =>
  `${error.instancePath || '/'} ${error.message ?? 'is invalid'}${error.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : ''}`;

/** The validation of a custom resource kind, `undefined` when the kind is not one of these. */
export function customResourceValidator(apiVersion: string, kind: string): ((object: unknown) => string[]) | undefined {
  const validate = validators[`${apiVersion}/${kind}`];
  if (!validate) return undefined;
  return (object) => (validate(object) ? [] : (validate.errors ?? []).map(describeError));
}
