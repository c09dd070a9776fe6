import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { Namespace, ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { IConfigMap, IContainer, IPodSpec, IPodTemplateSpec, IProbe, ISecret, IService } from 'kubernetes-models/v1';
import { DaemonSet, Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import { CronJob, Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import type { IIngress, INetworkPolicy, INetworkPolicyPeer, INetworkPolicyPort } from 'kubernetes-models/networking.k8s.io/v1';
import type { ILabelSelector } from '@kubernetes-models/apimachinery/apis/meta/v1/LabelSelector';
import { customResourceValidator } from './custom-resources';

/**
 * Policy checks over rendered Kubernetes objects. Each check is a pure function of the objects
 * that returns its violations as readable lines (empty: the policy holds), so a spec can feed it
 * the real render or a deliberately broken copy.
 */

/** A rendered object: apiVersion, kind and metadata, the rest as Kubernetes defines it for the kind. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** `kubectl kustomize DIR`, parsed. Throws with kubectl's message when rendering fails. */
export function renderKustomization(dir: string, cwd: string): Manifest[] {
  const run = spawnSync('kubectl', ['kustomize', dir], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw new Error(`kubectl kustomize ${dir} could not run (${run.error.message}): kubectl must be on PATH`);
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${run.stderr}`);
  return parseManifests(run.stdout);
}

/** Multi-document YAML to objects; empty documents are skipped, a YAML error throws. */
export function parseManifests(text: string): Manifest[] {
  const manifests: Manifest[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) throw new Error(`invalid YAML: ${document.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (!isManifest(value)) throw new Error(`not a Kubernetes object: ${JSON.stringify(value).slice(0, 200)}`);
    manifests.push(value);
  }
  return manifests;
}

function isManifest(value: unknown): value is Manifest {
  if (typeof value !== 'object' || value === null) return false;
  const { apiVersion, kind, metadata } = value as Record<string, unknown>;
  return (
    typeof apiVersion === 'string' &&
    typeof kind === 'string' &&
    typeof metadata === 'object' &&
    metadata !== null &&
    typeof (metadata as Record<string, unknown>).name === 'string'
  );
}

export const nameOf = (m: Manifest): string => `${m.kind}/${m.metadata.name}`;

// ---------------------------------------------------------------------------------------------
// Schemas

type Validating = new (data: object) => { validate(): void };

/** The kinds these manifests may contain, each with its Kubernetes schema (kubernetes-models). */
const MODELS: Record<string, Validating> = Object.fromEntries(
  [
    Namespace,
    ConfigMap,
    Secret,
    Service,
    ServiceAccount,
    Deployment,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
    HorizontalPodAutoscaler,
    PodDisruptionBudget,
    NetworkPolicy,
    Ingress,
  ].map((model) => [`${model.apiVersion}/${model.kind}`, model as unknown as Validating]),
);

/**
 * Every object validates against the schema of its apiVersion and kind (the Prometheus Operator's
 * kinds against custom-resources.ts); an unknown kind is a violation.
 */
export function checkSchemas(manifests: Manifest[]): string[] {
  const violations: string[] = [];
  for (const manifest of manifests) {
    const custom = customResourceValidator(manifest.apiVersion, manifest.kind);
    if (custom) {
      violations.push(...custom(manifest).map((error) => `${nameOf(manifest)}: ${error}`));
      continue;
    }
    const model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
    if (!model) {
      violations.push(`${nameOf(manifest)}: no schema for ${manifest.apiVersion} ${manifest.kind}`);
      continue;
    }
    try {
      new model(manifest).validate();
    } catch (error) {
      violations.push(`${nameOf(manifest)}: ${(error as Error).message}`);
    }
  }
  return violations;
}

// ---------------------------------------------------------------------------------------------
// Workloads

export interface Workload {
  manifest: Manifest;
  /** The pod template's `app.kubernetes.io/name` (or the object's name). */
  app: string;
  labels: Record<string, string>;
  pod: IPodSpec;
  /** Deployments, StatefulSets and DaemonSets serve until stopped; Jobs and CronJobs run to completion. */
  longRunning: boolean;
}

/** The pod templates of the workload kinds, with the labels their pods get. */
export function workloads(manifests: Manifest[]): Workload[] {
  const found: Workload[] = [];
  for (const manifest of manifests) {
    let template: IPodTemplateSpec | undefined;
    let longRunning = true;
    switch (manifest.kind) {
      case 'Deployment':
      case 'StatefulSet':
      case 'DaemonSet':
        template = (manifest.spec as { template?: IPodTemplateSpec } | undefined)?.template;
        break;
      case 'Job':
        template = (manifest.spec as { template?: IPodTemplateSpec } | undefined)?.template;
        longRunning = false;
        break;
      case 'CronJob':
        template = (manifest.spec as { jobTemplate?: { spec?: { template?: IPodTemplateSpec } } } | undefined)?.jobTemplate
          ?.spec?.template;
        longRunning = false;
        break;
      default:
        continue;
    }
    const labels = template?.metadata?.labels ?? {};
    found.push({
      manifest,
      app: labels['app.kubernetes.io/name'] ?? manifest.metadata.name,
      labels,
      pod: template?.spec ?? { containers: [] },
      longRunning,
    });
  }
  return found;
}

function containersOf(pod: IPodSpec): { container: IContainer; init: boolean }[] {
  return [
    ...(pod.initContainers ?? []).map((container) => ({ container, init: true })),
    ...pod.containers.map((container) => ({ container, init: false })),
  ];
}

/**
 * Pod and container hardening: non-root, read-only root filesystem with a writable emptyDir at
 * /tmp, no privilege escalation, every capability dropped, seccomp RuntimeDefault, no host
 * namespaces. Pod and container settings are both required, so neither relies on the other.
 */
export function checkPodSecurity(manifests: Manifest[]): string[] {
  const violations: string[] = [];
  for (const { manifest, pod } of workloads(manifests)) {
    const where = nameOf(manifest);
    const podContext = pod.securityContext ?? {};
    if (podContext.runAsNonRoot !== true) violations.push(`${where}: pod securityContext.runAsNonRoot is not true`);
    if (podContext.runAsUser === 0) violations.push(`${where}: pod securityContext.runAsUser is 0 (root)`);
    if (podContext.seccompProfile?.type !== 'RuntimeDefault') {
      violations.push(`${where}: pod securityContext.seccompProfile.type is not RuntimeDefault`);
    }
    for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
      if (pod[field] === true) violations.push(`${where}: ${field} is true`);
    }
    const emptyDirs = new Set((pod.volumes ?? []).filter((volume) => volume.emptyDir).map((volume) => volume.name));
    for (const { container } of containersOf(pod)) {
      const at = `${where} container ${container.name}`;
      const context = container.securityContext ?? {};
      if (context.runAsNonRoot !== true) violations.push(`${at}: securityContext.runAsNonRoot is not true`);
      if (context.runAsUser === 0) violations.push(`${at}: securityContext.runAsUser is 0 (root)`);
      if (context.readOnlyRootFilesystem !== true) violations.push(`${at}: securityContext.readOnlyRootFilesystem is not true`);
      if (context.allowPrivilegeEscalation !== false) {
        violations.push(`${at}: securityContext.allowPrivilegeEscalation is not false`);
      }
      if (context.privileged === true) violations.push(`${at}: securityContext.privileged is true`);
      if (!(context.capabilities?.drop ?? []).includes('ALL')) violations.push(`${at}: securityContext.capabilities.drop lacks ALL`);
      if ((context.capabilities?.add ?? []).length > 0) {
        violations.push(`${at}: securityContext.capabilities.add is not empty (${context.capabilities?.add?.join(', ')})`);
      }
      if (context.seccompProfile?.type !== 'RuntimeDefault') {
        violations.push(`${at}: securityContext.seccompProfile.type is not RuntimeDefault`);
      }
      const tmp = (container.volumeMounts ?? []).find((mount) => mount.mountPath === '/tmp');
      if (!tmp || !emptyDirs.has(tmp.name) || tmp.readOnly === true) {
        violations.push(`${at}: no writable emptyDir mounted at /tmp (the root filesystem is read-only)`);
      }
    }
  }
  return violations;
}

/** Every container requests CPU and memory and has a memory limit no lower than its request. */
export function checkResources(manifests: Manifest[]): string[] {
  const violations: string[] = [];
  for (const { manifest, pod } of workloads(manifests)) {
    for (const { container } of containersOf(pod)) {
      const at = `${nameOf(manifest)} container ${container.name}`;
      const requests = container.resources?.requests ?? {};
      const limits = container.resources?.limits ?? {};
      if (requests.cpu === undefined) violations.push(`${at}: resources.requests.cpu is not set`);
      if (requests.memory === undefined) violations.push(`${at}: resources.requests.memory is not set`);
      if (limits.memory === undefined) {
        violations.push(`${at}: resources.limits.memory is not set`);
      } else if (requests.memory !== undefined && quantity(limits.memory) < quantity(requests.memory)) {
        violations.push(`${at}: resources.limits.memory (${limits.memory}) is below the request (${requests.memory})`);
      }
    }
  }
  return violations;
}

const QUANTITY_SUFFIXES: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** A Kubernetes resource quantity as a number (`512Mi` → 536870912). */
export function quantity(value: string | number): number {
  if (typeof value === 'number') return value;
  const match = /^([0-9.]+)([a-zA-Z]*)$/.exec(value);
  const factor = match ? QUANTITY_SUFFIXES[match[2]] : undefined;
  if (!match || factor === undefined) throw new Error(`not a resource quantity: ${value}`);
  return Number(match[1]) * factor;
}

/** `repository[:tag][@sha256:digest]`; the tag is what follows the last `:` after the last `/`. */
export function parseImage(image: string): { repository: string; tag?: string; digest?: string } {
  const [named, digest] = image.split('@', 2);
  const slash = named.lastIndexOf('/');
  const colon = named.lastIndexOf(':');
  if (colon > slash) return { repository: named.slice(0, colon), tag: named.slice(colon + 1), digest };
  return { repository: named, digest };
}

/** Every image is pinned: a digest, or a tag other than `latest`. */
export function checkImages(manifests: Manifest[]): string[] {
  const violations: string[] = [];
  for (const { manifest, pod } of workloads(manifests)) {
    for (const { container } of containersOf(pod)) {
      const at = `${nameOf(manifest)} container ${container.name}`;
      if (!container.image) {
        violations.push(`${at}: no image`);
        continue;
      }
      const { tag, digest } = parseImage(container.image);
      if (digest !== undefined) {
        if (!/^sha256:[a-f0-9]{64}$/.test(digest)) violations.push(`${at}: image ${container.image} has a malformed digest`);
      } else if (tag === undefined) {
        violations.push(`${at}: image ${container.image} is not pinned (no tag, no digest)`);
      } else if (tag === 'latest') {
        violations.push(`${at}: image ${container.image} uses the tag latest`);
      }
    }
  }
  return violations;
}

export const HEALTH_ROUTES = { live: '/health/live', ready: '/health/ready' } as const;

/** The number a probe's port means in its container: a number, or a declared port's name. */
export function probePort(container: IContainer, probe: IProbe | undefined): number | undefined {
  const port = probe?.httpGet?.port;
  if (typeof port === 'number') return port;
  return container.ports?.find((declared) => declared.name === port)?.containerPort;
}

/**
 * Long-running containers have HTTP liveness (/health/live) and readiness (/health/ready) probes,
 * and a startup probe, on a port the container declares. Jobs run to completion and have none.
 */
export function checkProbes(manifests: Manifest[]): string[] {
  const violations: string[] = [];
  for (const { manifest, pod, longRunning } of workloads(manifests)) {
    if (!longRunning) continue;
    for (const { container, init } of containersOf(pod)) {
      if (init) continue;
      const at = `${nameOf(manifest)} container ${container.name}`;
      const declared = new Set((container.ports ?? []).map((port) => port.containerPort));
      const expectations: [string, IProbe | undefined, string][] = [
        ['livenessProbe', container.livenessProbe, HEALTH_ROUTES.live],
        ['readinessProbe', container.readinessProbe, HEALTH_ROUTES.ready],
        ['startupProbe', container.startupProbe, HEALTH_ROUTES.live],
      ];
      for (const [field, probe, path] of expectations) {
        if (!probe) {
          violations.push(`${at}: no ${field}`);
          continue;
        }
        if (probe.httpGet?.path !== path) {
          violations.push(`${at}: ${field} is not an HTTP GET of ${path} (${JSON.stringify(probe.httpGet?.path ?? probe)})`);
        }
        const port = probePort(container, probe);
        if (port === undefined || !declared.has(port)) {
          violations.push(`${at}: ${field} port ${String(probe.httpGet?.port)} is not a declared container port`);
        }
      }
    }
  }
  return violations;
}

/**
 * Long-running pods ask Prometheus to scrape `/metrics` on a port their first container declares
 * (the gateway's API port, the health port elsewhere): `prometheus.io/scrape`, `…/port`, `…/path`.
 */
export function checkScrapeAnnotations(manifests: Manifest[]): string[] {
  const violations: string[] = [];
  for (const { manifest, pod, longRunning } of workloads(manifests)) {
    if (!longRunning) continue;
    const annotations = (manifest.spec as { template?: IPodTemplateSpec }).template?.metadata?.annotations ?? {};
    const at = nameOf(manifest);
    if (annotations['prometheus.io/scrape'] !== 'true') violations.push(`${at}: not marked for scraping (prometheus.io/scrape)`);
    if (annotations['prometheus.io/path'] !== '/metrics') violations.push(`${at}: scrape path is not /metrics`);
    const declared = new Set((pod.containers[0]?.ports ?? []).map((port) => String(port.containerPort)));
    if (!declared.has(annotations['prometheus.io/port'] ?? '')) {
      violations.push(`${at}: scrape port ${annotations['prometheus.io/port'] ?? '(none)'} is not a declared container port`);
    }
  }
  return violations;
}

// ---------------------------------------------------------------------------------------------
// Secrets

/** Names of settings that hold credentials. */
const CREDENTIAL_NAME = /(PASSWORD|PASSWD|SECRET|TOKEN|CREDENTIALS?|_KEY|^KEY)$/i;
/** A URL with a password in it: `scheme://user:password@host`. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]+@/i;
/** Values that were never meant to be used. */
const PLACEHOLDER = /(change[-_]?me|replace[-_]?me|placeholder|example|xxx|todo|secret123|^password$|^secret$)/i;

/**
 * Credentials reach containers only through Secret references: no credential-looking literal env
 * value or ConfigMap entry (a URL carrying a password, a setting named like a secret), no env
 * value taken from a ConfigMap key named like a secret, and no Secret object with placeholder
 * values (a Secret in the manifests is one whose values are in the repository).
 */
export function checkSecrets(manifests: Manifest[]): string[] {
  const violations: string[] = [];
  const looksLikeCredential = (name: string, value: string) => URL_WITH_PASSWORD.test(value) || (CREDENTIAL_NAME.test(name) && value !== '');
  for (const manifest of manifests) {
    if (manifest.kind === 'ConfigMap') {
      for (const [key, value] of Object.entries((manifest as unknown as IConfigMap).data ?? {})) {
        if (looksLikeCredential(key, value)) violations.push(`${nameOf(manifest)}: ${key} looks like a credential in a ConfigMap`);
      }
    }
    if (manifest.kind === 'Secret') {
      const secret = manifest as unknown as ISecret;
      const values = [
        ...Object.entries(secret.stringData ?? {}),
        ...Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')] as const),
      ];
      for (const [key, value] of values) {
        if (PLACEHOLDER.test(value)) violations.push(`${nameOf(manifest)}: ${key} holds a placeholder value`);
      }
    }
  }
  for (const { manifest, pod } of workloads(manifests)) {
    for (const { container } of containersOf(pod)) {
      const at = `${nameOf(manifest)} container ${container.name}`;
      for (const variable of container.env ?? []) {
        if (variable.value !== undefined && looksLikeCredential(variable.name, variable.value)) {
          violations.push(`${at}: env ${variable.name} is a literal credential (use a secretKeyRef)`);
        }
        const fromConfigMap = variable.valueFrom?.configMapKeyRef;
        if (fromConfigMap && CREDENTIAL_NAME.test(fromConfigMap.key)) {
          violations.push(`${at}: env ${variable.name} reads a credential from ConfigMap ${fromConfigMap.name}`);
        }
      }
    }
  }
  return violations;
}

/** Every Secret a workload reads, by name, with the keys it reads (`*`: the whole Secret via envFrom). */
export function secretReferences(manifests: Manifest[]): Map<string, Set<string>> {
  const references = new Map<string, Set<string>>();
  const add = (name: string, key: string) => references.set(name, (references.get(name) ?? new Set()).add(key));
  for (const { pod } of workloads(manifests)) {
    for (const { container } of containersOf(pod)) {
      for (const variable of container.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        if (ref?.name) add(ref.name, ref.key);
      }
      for (const source of container.envFrom ?? []) if (source.secretRef?.name) add(source.secretRef.name, '*');
    }
    for (const volume of pod.volumes ?? []) if (volume.secret?.secretName) add(volume.secret.secretName, '*');
  }
  return references;
}

// ---------------------------------------------------------------------------------------------
// Network policies

/** Whether a label selector selects these labels (an empty selector selects everything). */
export function selects(selector: ILabelSelector | undefined, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const expression of selector?.matchExpressions ?? []) {
    const value = labels[expression.key];
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
      default:
        throw new Error(`unknown selector operator ${expression.operator}`);
    }
  }
  return true;
}

const networkPolicies = (manifests: Manifest[]) =>
  manifests.filter((m) => m.kind === 'NetworkPolicy').map((m) => m as unknown as INetworkPolicy & Manifest);

/** The workloads (by app name) whose pods a NetworkPolicy selects. */
export function selectedApps(policy: INetworkPolicy, all: Workload[]): string[] {
  return all.filter((workload) => selects(policy.spec?.podSelector, workload.labels)).map((workload) => workload.app);
}

const policyTypes = (policy: INetworkPolicy): string[] =>
  policy.spec?.policyTypes ?? (policy.spec?.egress ? ['Ingress', 'Egress'] : ['Ingress']);

const DEFAULT_ROUTES = new Set(['0.0.0.0/0', '::/0']);

/** A peer list that admits any address: no peer at all, or an ipBlock of a default route. */
function anyAddress(peers: INetworkPolicyPeer[] | undefined): boolean {
  return !peers || peers.length === 0 || peers.some((peer) => peer.ipBlock !== undefined && DEFAULT_ROUTES.has(peer.ipBlock.cidr));
}

const isEmptySelector = (selector: ILabelSelector | undefined) =>
  Object.keys(selector?.matchLabels ?? {}).length === 0 && (selector?.matchExpressions ?? []).length === 0;

/** A peer list that admits every pod of the cluster: a namespace selector for all namespaces and no pod selector. */
function anyPod(peers: INetworkPolicyPeer[] | undefined): boolean {
  return (peers ?? []).some((peer) => peer.namespaceSelector !== undefined && peer.podSelector === undefined && isEmptySelector(peer.namespaceSelector));
}

const portLabel = (port: INetworkPolicyPort) => `${port.protocol ?? 'TCP'}/${String(port.port ?? '*')}${port.endPort ? `-${port.endPort}` : ''}`;

export interface NetworkRules {
  /** The only app that takes traffic from anywhere, and its ports. */
  publicApp: string;
  publicPorts: number[];
  /** The only port of the other apps that admits traffic (health checks from monitoring). */
  healthPort: number;
  /** The apps that reach the internet, each on these TCP ports only, never the private ranges. */
  internet: Record<string, number[]>;
  privateRanges: string[];
}

/**
 * Default deny for ingress and egress over every pod; ingress from anywhere only to the public
 * app on its ports, any other ingress only to the health port; egress to the internet (a default
 * route) only from the internet apps, each on its TCP ports, with the private ranges excluded; no
 * egress rule without destinations; every policy selects some workload (a label typo would
 * otherwise leave a policy without effect).
 */
export function checkNetworkPolicies(manifests: Manifest[], rules: NetworkRules): string[] {
  const violations: string[] = [];
  const all = workloads(manifests);
  const policies = networkPolicies(manifests);

  const defaultDeny = policies.find(
    (policy) =>
      isEmptySelector(policy.spec?.podSelector) &&
      policyTypes(policy).includes('Ingress') &&
      policyTypes(policy).includes('Egress') &&
      (policy.spec?.ingress ?? []).length === 0 &&
      (policy.spec?.egress ?? []).length === 0,
  );
  if (!defaultDeny) violations.push('no default-deny NetworkPolicy (empty podSelector, Ingress and Egress, no rules)');

  for (const policy of policies) {
    const where = nameOf(policy);
    const apps = selectedApps(policy, all);
    if (apps.length === 0) violations.push(`${where}: selects the pods of no workload`);
    if (policyTypes(policy).includes('Ingress')) {
      for (const rule of policy.spec?.ingress ?? []) {
        const ports = rule.ports ?? [];
        if (ports.length === 0) violations.push(`${where}: an ingress rule admits every port`);
        if (anyAddress(rule.from) || anyPod(rule.from)) {
          const others = apps.filter((app) => app !== rules.publicApp);
          if (others.length > 0) violations.push(`${where}: ingress from anywhere to ${others.join(', ')}`);
          const stray = ports.filter((port) => typeof port.port !== 'number' || !rules.publicPorts.includes(port.port));
          if (stray.length > 0) {
            violations.push(`${where}: ingress from anywhere on ${stray.map(portLabel).join(', ')} (only ${rules.publicPorts.join(', ')})`);
          }
        } else if (apps.some((app) => app !== rules.publicApp)) {
          const stray = ports.filter((port) => port.port !== rules.healthPort);
          if (stray.length > 0) {
            violations.push(`${where}: ingress to ${apps.join(', ')} on ${stray.map(portLabel).join(', ')} (only the health port ${rules.healthPort})`);
          }
        }
      }
    }
    if (policyTypes(policy).includes('Egress')) {
      for (const rule of policy.spec?.egress ?? []) {
        const peers = rule.to ?? [];
        if (peers.length === 0) {
          violations.push(`${where}: an egress rule without destinations admits every address`);
          continue;
        }
        if (anyPod(peers)) violations.push(`${where}: egress to every pod of the cluster`);
        const routes = peers.filter((peer) => peer.ipBlock !== undefined && DEFAULT_ROUTES.has(peer.ipBlock.cidr));
        if (routes.length === 0) continue;
        const others = apps.filter((app) => !(app in rules.internet));
        if (others.length > 0) violations.push(`${where}: egress to the internet from ${others.join(', ')}`);
        const ports = rule.ports ?? [];
        for (const app of apps.filter((a) => a in rules.internet)) {
          const allowedPorts = rules.internet[app];
          const allowed =
            ports.length > 0 &&
            ports.every(
              (port) => (port.protocol ?? 'TCP') === 'TCP' && typeof port.port === 'number' && allowedPorts.includes(port.port) && !port.endPort,
            );
          if (!allowed) {
            const label = ports.length === 0 ? 'every port' : ports.map(portLabel).join(', ');
            violations.push(`${where}: egress to the internet on ${label} (only TCP ${allowedPorts.join(', ')} from ${app})`);
          }
        }
        for (const peer of routes.filter((route) => route.ipBlock?.cidr === '0.0.0.0/0')) {
          const missing = rules.privateRanges.filter((range) => !(peer.ipBlock?.except ?? []).includes(range));
          if (missing.length > 0) violations.push(`${where}: egress to 0.0.0.0/0 does not exclude ${missing.join(', ')}`);
        }
      }
    }
  }

  for (const [app, allowedPorts] of Object.entries(rules.internet)) {
    const reaches = policies.some(
      (policy) =>
        selectedApps(policy, all).includes(app) &&
        (policy.spec?.egress ?? []).some(
          (rule) =>
            (rule.to ?? []).some((peer) => peer.ipBlock?.cidr === '0.0.0.0/0') &&
            (rule.ports ?? []).some((port) => typeof port.port === 'number' && allowedPorts.includes(port.port)),
        ),
    );
    if (!reaches) violations.push(`${app} has no egress to 0.0.0.0/0 on ${allowedPorts.join(', ')}`);
  }
  return violations;
}

/** The TCP/UDP ports an app may send to, from the policies selecting it (`*` for a rule without ports). */
export function egressPorts(manifests: Manifest[], app: string): Set<string> {
  const all = workloads(manifests);
  const ports = new Set<string>();
  for (const policy of networkPolicies(manifests)) {
    if (!selectedApps(policy, all).includes(app) || !policyTypes(policy).includes('Egress')) continue;
    for (const rule of policy.spec?.egress ?? []) {
      if ((rule.ports ?? []).length === 0) ports.add('*');
      for (const port of rule.ports ?? []) ports.add(`${port.protocol ?? 'TCP'}/${String(port.port)}`);
    }
  }
  return ports;
}

// ---------------------------------------------------------------------------------------------
// Replicas, disruption, rollout

/**
 * One owner per replica count: a Deployment an HPA scales sets no `replicas`, any other sets
 * them; every HPA targets a rendered Deployment with minReplicas ≤ maxReplicas; a PDB's
 * minAvailable stays below the replica floor, so a node drain can proceed.
 */
export function checkReplicaOwnership(manifests: Manifest[]): string[] {
  const violations: string[] = [];
  const deployments = manifests.filter((m) => m.kind === 'Deployment').map((m) => m as unknown as IDeployment & Manifest);
  const hpas = manifests.filter((m) => m.kind === 'HorizontalPodAutoscaler').map((m) => m as unknown as IHorizontalPodAutoscaler & Manifest);
  const floor = new Map<string, number>();
  for (const hpa of hpas) {
    const target = hpa.spec?.scaleTargetRef;
    const deployment = deployments.find((d) => target?.kind === 'Deployment' && d.metadata.name === target.name);
    if (!deployment) {
      violations.push(`${nameOf(hpa)}: scales ${target?.kind}/${target?.name}, which is not rendered`);
      continue;
    }
    const min = hpa.spec?.minReplicas ?? 1;
    if (min > (hpa.spec?.maxReplicas ?? 0)) violations.push(`${nameOf(hpa)}: minReplicas ${min} > maxReplicas ${hpa.spec?.maxReplicas}`);
    if (deployment.spec?.replicas !== undefined) {
      violations.push(`${nameOf(deployment)}: sets replicas (${deployment.spec.replicas}) although ${nameOf(hpa)} owns them`);
    }
    floor.set(deployment.metadata.name, min);
  }
  for (const deployment of deployments) {
    if (floor.has(deployment.metadata.name)) continue;
    if (deployment.spec?.replicas === undefined) {
      violations.push(`${nameOf(deployment)}: no replicas and no HorizontalPodAutoscaler (it would run one pod)`);
    } else {
      floor.set(deployment.metadata.name, deployment.spec.replicas);
    }
  }
  for (const manifest of manifests.filter((m) => m.kind === 'PodDisruptionBudget')) {
    const pdb = manifest as unknown as IPodDisruptionBudget & Manifest;
    const minAvailable = pdb.spec?.minAvailable;
    if (typeof minAvailable !== 'number') continue;
    for (const deployment of deployments) {
      const labels = deployment.spec?.template.metadata?.labels ?? {};
      if (!selects(pdb.spec?.selector, labels)) continue;
      const replicas = floor.get(deployment.metadata.name) ?? 0;
      if (minAvailable >= replicas) {
        violations.push(`${nameOf(pdb)}: minAvailable ${minAvailable} leaves no disruption for ${replicas} replica(s) of ${nameOf(deployment)}`);
      }
    }
  }
  return violations;
}

/**
 * A Deployment behind a Service drains before it stops: a preStop sleep while the endpoint
 * removal propagates, a grace period longer than that sleep plus the app's shutdown deadline,
 * and its replicas spread over nodes.
 */
export function checkServedWorkloads(manifests: Manifest[], shutdownDeadlineSeconds: number): string[] {
  const violations: string[] = [];
  const services = manifests.filter((m) => m.kind === 'Service').map((m) => m as unknown as IService & Manifest);
  for (const { manifest, pod, labels } of workloads(manifests)) {
    if (manifest.kind !== 'Deployment') continue;
    const served = services.some((service) => service.spec?.selector && selects({ matchLabels: service.spec.selector }, labels));
    if (!served) continue;
    const where = nameOf(manifest);
    for (const container of pod.containers) {
      const preStop = container.lifecycle?.preStop;
      const command = preStop?.exec?.command ?? [];
      const sleep = preStop?.sleep?.seconds ?? (command[0] === 'sleep' ? Number(command[1]) : undefined);
      if (sleep === undefined || !(sleep > 0)) {
        violations.push(`${where} container ${container.name}: no preStop sleep`);
        continue;
      }
      const grace = pod.terminationGracePeriodSeconds ?? 30;
      if (grace <= sleep + shutdownDeadlineSeconds) {
        violations.push(
          `${where}: terminationGracePeriodSeconds ${grace} does not cover the preStop sleep (${sleep} s) and the shutdown deadline (${shutdownDeadlineSeconds} s)`,
        );
      }
    }
    const spread = (pod.topologySpreadConstraints ?? []).some(
      (constraint) => constraint.topologyKey === 'kubernetes.io/hostname' && selects(constraint.labelSelector, labels),
    );
    if (!spread) violations.push(`${where}: no topology spread constraint over kubernetes.io/hostname selecting its pods`);
  }
  return violations;
}

// ---------------------------------------------------------------------------------------------
// The way in

export interface EdgeRules {
  /** The Service every Ingress path leads to. */
  service: string;
  /** Paths that must be routed from outside (an id in a path is any segment). */
  publicPaths: string[];
  /** Paths no Ingress may route (metrics, health). */
  privatePaths: string[];
}

/** Whether an Ingress path (Exact or Prefix, as Kubernetes defines them) matches a request path. */
export function ingressPathMatches(pathType: string, path: string, request: string): boolean {
  if (pathType === 'Exact') return request === path;
  const prefix = path.replace(/\/+$/, '');
  return prefix === '' || request === prefix || request.startsWith(`${prefix}/`);
}

/**
 * Every Ingress has a class, a cert-manager issuer and TLS for each of its hosts, leads only to
 * the service, routes every public path and no private one (ImplementationSpecific paths are
 * refused: their meaning depends on the controller); PUBLIC_BASE_URL is https:// of its host.
 */
export function checkIngress(manifests: Manifest[], rules: EdgeRules): string[] {
  const violations: string[] = [];
  const ingresses = manifests.filter((m) => m.kind === 'Ingress').map((m) => m as unknown as IIngress & Manifest);
  if (ingresses.length === 0) violations.push('no Ingress');
  const routed: { host: string; pathType: string; path: string }[] = [];
  for (const ingress of ingresses) {
    const where = nameOf(ingress);
    const annotations = ingress.metadata.annotations ?? {};
    if (!ingress.spec?.ingressClassName) violations.push(`${where}: no ingressClassName`);
    if (!annotations['cert-manager.io/cluster-issuer'] && !annotations['cert-manager.io/issuer']) {
      violations.push(`${where}: no cert-manager issuer annotation (cert-manager.io/cluster-issuer)`);
    }
    const tlsHosts = new Set((ingress.spec?.tls ?? []).filter((tls) => tls.secretName).flatMap((tls) => tls.hosts ?? []));
    for (const rule of ingress.spec?.rules ?? []) {
      if (!rule.host) violations.push(`${where}: a rule without host`);
      else if (!tlsHosts.has(rule.host)) violations.push(`${where}: host ${rule.host} has no TLS`);
      for (const path of rule.http?.paths ?? []) {
        const backend = path.backend.service;
        if (backend?.name !== rules.service) violations.push(`${where}: ${path.path} leads to ${backend?.name ?? 'no service'}`);
        if (path.pathType !== 'Exact' && path.pathType !== 'Prefix') {
          violations.push(`${where}: ${path.path} is ${path.pathType} (only Exact or Prefix)`);
          continue;
        }
        routed.push({ host: rule.host ?? '', pathType: path.pathType, path: path.path ?? '/' });
      }
    }
  }
  const routes = (request: string) => routed.filter((r) => ingressPathMatches(r.pathType, r.path, request));
  for (const path of rules.publicPaths) {
    const request = path.replace(/\{[^}]+\}/g, 'x');
    if (routes(request).length === 0) violations.push(`${request} is not routed by any Ingress`);
  }
  for (const path of rules.privatePaths) {
    for (const route of routes(path)) violations.push(`${path} is routed (${route.pathType} ${route.path} at ${route.host})`);
  }
  const config = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'cars-config') as (IConfigMap & Manifest) | undefined;
  const origin = config?.data?.PUBLIC_BASE_URL;
  const hosts = [...new Set(routed.map((route) => route.host))];
  if (!hosts.some((host) => origin === `https://${host}`)) {
    violations.push(`PUBLIC_BASE_URL ${origin ?? '(unset)'} is not https:// of an Ingress host (${hosts.join(', ')})`);
  }
  return violations;
}

/**
 * The app's ingress comes only from the pods of the namespaces named for each of its ports (the
 * ingress controller's on the API port, the scraper's on the health port): every policy admitting
 * traffic to it names a namespace by `kubernetes.io/metadata.name` and nothing wider (no ipBlock,
 * no peer-less rule, no other namespace), and only on a port that namespace may reach. A rule
 * without ports reaches every port the app's container declares; a named port is resolved there.
 */
export function checkIngressSources(manifests: Manifest[], app: string, sourcesByPort: Record<number, string[]>): string[] {
  const violations: string[] = [];
  const all = workloads(manifests);
  const declared = all.find((w) => w.manifest.metadata.name === app)?.pod.containers[0]?.ports ?? [];
  const only = Object.entries(sourcesByPort)
    .map(([port, namespaces]) => `${namespaces.join(', ') || 'none'} on ${port}`)
    .join('; ');
  for (const policy of networkPolicies(manifests)) {
    if (!selectedApps(policy, all).includes(app) || !policyTypes(policy).includes('Ingress')) continue;
    for (const rule of policy.spec?.ingress ?? []) {
      const peers = rule.from ?? [];
      if (peers.length === 0) violations.push(`${nameOf(policy)}: admits every source to ${app}`);
      const ports = (rule.ports ?? []).length === 0 ? declared.map((d) => d.containerPort) : rule.ports!.map((p) => resolvePort(p.port, declared));
      for (const peer of peers) {
        const namespace = peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'];
        const exact = peer.ipBlock === undefined && (peer.namespaceSelector?.matchExpressions ?? []).length === 0;
        const stray = ports.filter((port) => port === undefined || namespace === undefined || !(sourcesByPort[port] ?? []).includes(namespace));
        if (!exact || stray.length > 0) {
          const on = stray.length > 0 ? stray.map((port) => String(port ?? '?')).join(', ') : ports.join(', ');
          violations.push(`${nameOf(policy)}: admits ${JSON.stringify(peer)} to ${app} on ${on} (only ${only})`);
        }
      }
    }
  }
  return violations;
}

/** A policy's port (number or container port name) as the number the container declares. */
function resolvePort(port: number | string | undefined, declared: { name?: string; containerPort: number }[]): number | undefined {
  if (typeof port === 'number') return port;
  return declared.find((d) => d.name === port)?.containerPort;
}
