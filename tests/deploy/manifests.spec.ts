import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { IConfigMap, IContainer, IPodSpec } from 'kubernetes-models/v1';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import {
  checkImages,
  checkNetworkPolicies,
  checkPodSecurity,
  checkProbes,
  checkScrapeAnnotations,
  checkReplicaOwnership,
  checkResources,
  checkSchemas,
  checkSecrets,
  checkServedWorkloads,
  egressPorts,
  Manifest,
  NetworkRules,
  parseImage,
  parseManifests,
  probePort,
  renderKustomization,
  secretReferences,
  workloads,
} from './manifest-policies';

const ROOT = join(__dirname, '..', '..');
const NAMESPACE = 'classic-car-auctions';
const APPS = ['gateway', 'query', 'stats', 'webhooks', 'change-detector', 'delivery-worker'];
const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16'];

const find = (manifests: Manifest[], kind: string, name: string): Manifest => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`${kind}/${name} is not rendered`);
  return found;
};
const podOf = (manifests: Manifest[], kind: string, name: string): IPodSpec => {
  const workload = workloads(manifests).find((w) => w.manifest.kind === kind && w.manifest.metadata.name === name);
  if (!workload) throw new Error(`${kind}/${name} is not rendered`);
  return workload.pod;
};
const containerOf = (manifests: Manifest[], kind: string, name: string): IContainer => podOf(manifests, kind, name).containers[0];
const configOf = (manifests: Manifest[]) => (find(manifests, 'ConfigMap', 'cars-config') as unknown as IConfigMap).data ?? {};
const policyOf = (manifests: Manifest[], name: string) => find(manifests, 'NetworkPolicy', name) as unknown as INetworkPolicy;

/** The network rules (docs/operations.md, NetworkPolicy assumptions): the gateway is the edge, the delivery worker the one way out. */
function networkRules(manifests: Manifest[]): NetworkRules {
  const config = configOf(manifests);
  return {
    publicApp: 'gateway',
    publicPorts: [Number(config.PORT)],
    healthPort: Number(config.HEALTH_PORT),
    internetApp: 'delivery-worker',
    internetPorts: [443],
    privateRanges: PRIVATE_RANGES,
  };
}

const shutdownDeadlineSeconds = (manifests: Manifest[]) => Number(configOf(manifests).SHUTDOWN_DEADLINE_MS) / 1000;

describe.each(['k8s/overlays/production', 'k8s/base'])('kubectl kustomize %s', (dir) => {
  let rendered: Manifest[];

  beforeAll(() => {
    rendered = renderKustomization(dir, ROOT);
  });

  it('renders one Deployment per app, the migrations Job, the policies, all in the namespace', () => {
    for (const app of APPS) find(rendered, 'Deployment', app);
    find(rendered, 'Job', 'cars-migrations');
    find(rendered, 'NetworkPolicy', 'default-deny');
    for (const manifest of rendered.filter((m) => m.kind !== 'Namespace')) {
      expect(`${manifest.kind}/${manifest.metadata.name} ${manifest.metadata.namespace}`).toBe(
        `${manifest.kind}/${manifest.metadata.name} ${NAMESPACE}`,
      );
    }
  });

  it('validates every object against its Kubernetes schema', () => {
    expect(checkSchemas(rendered)).toEqual([]);
  });

  it('runs every pod and container non-root, read-only, without privilege escalation or capabilities, under RuntimeDefault seccomp', () => {
    expect(workloads(rendered)).toHaveLength(APPS.length + 1);
    expect(checkPodSecurity(rendered)).toEqual([]);
  });

  it('sets CPU and memory requests and a memory limit on every container', () => {
    expect(checkResources(rendered)).toEqual([]);
  });

  it('pins every image by tag or digest', () => {
    expect(checkImages(rendered)).toEqual([]);
  });

  it('probes /health/live and /health/ready of every app on the port it serves them (PORT for the gateway, HEALTH_PORT for the others)', () => {
    expect(checkProbes(rendered)).toEqual([]);
    const config = configOf(rendered);
    for (const app of APPS) {
      const container = containerOf(rendered, 'Deployment', app);
      const expected = Number(app === 'gateway' ? config.PORT : config.HEALTH_PORT);
      expect([app, probePort(container, container.readinessProbe), probePort(container, container.livenessProbe)]).toEqual([
        app,
        expected,
        expected,
      ]);
    }
  });

  it('asks Prometheus to scrape /metrics of every app on the port that serves it', () => {
    expect(checkScrapeAnnotations(rendered)).toEqual([]);
  });

  it('takes credentials only from the Secret cars-secrets, by key, and renders no Secret', () => {
    expect(checkSecrets(rendered)).toEqual([]);
    expect(rendered.filter((m) => m.kind === 'Secret').map((m) => m.metadata.name)).toEqual([]);
    const example = parseManifests(readFileSync(join(ROOT, 'k8s/examples/secret.example.yaml'), 'utf8'));
    const exampleKeys = Object.keys((example[0] as { stringData?: Record<string, string> }).stringData ?? {});
    const references = secretReferences(rendered);
    expect([...references.keys()]).toEqual(['cars-secrets']);
    expect([...(references.get('cars-secrets') ?? [])].filter((key) => !exampleKeys.includes(key))).toEqual([]);
  });

  it('denies all traffic by default; only the gateway takes ingress, only the delivery worker reaches the internet (TCP 443)', () => {
    expect(checkNetworkPolicies(rendered, networkRules(rendered))).toEqual([]);
  });

  it('lets every app resolve names and reach PostgreSQL and RabbitMQ, and only the gateway reach Redis', () => {
    for (const app of [...APPS, 'migrations']) {
      const ports = egressPorts(rendered, app);
      expect([app, ports.has('UDP/53'), ports.has('TCP/53'), ports.has('TCP/5432')]).toEqual([app, true, true, true]);
      expect([app, ports.has('TCP/5672')]).toEqual([app, app !== 'migrations']);
      expect([app, ports.has('TCP/6379')]).toEqual([app, app === 'gateway']);
      expect([app, ports.has('*')]).toEqual([app, false]);
    }
  });

  it('gives each replica count one owner: the HPA where there is one, the Deployment elsewhere', () => {
    expect(checkReplicaOwnership(rendered)).toEqual([]);
  });

  it('drains the gateway before it stops and spreads its replicas', () => {
    expect(checkServedWorkloads(rendered, shutdownDeadlineSeconds(rendered))).toEqual([]);
    expect(podOf(rendered, 'Deployment', 'gateway').containers[0].lifecycle?.preStop?.sleep?.seconds).toBeGreaterThan(0);
  });

  it('runs the compiled entry point of each app, and the admin db:migrate (migrations, then the reference catalog) in the Job', () => {
    for (const app of APPS) {
      expect(containerOf(rendered, 'Deployment', app).command).toEqual(['node', `dist/apps/${app}/src/main.js`]);
      expect(existsSync(join(ROOT, 'apps', app, 'src', 'main.ts'))).toBe(true);
    }
    expect(containerOf(rendered, 'Job', 'cars-migrations').command).toEqual(['node', 'dist/tools/admin/src/main.js', 'db:migrate']);
    const dbCommands = readFileSync(join(ROOT, 'tools/admin/src/commands/db.commands.ts'), 'utf8');
    expect(dbCommands).toMatch(/name: 'db:migrate',[\s\S]*?migrateAndLoadReference\(/);
  });
});

describe('production overlay', () => {
  let rendered: Manifest[];

  beforeAll(() => {
    rendered = renderKustomization('k8s/overlays/production', ROOT);
  });

  it('raises the replica floor of gateway and query on their HPAs, not on the Deployments', () => {
    const minReplicas = (name: string) => (find(rendered, 'HorizontalPodAutoscaler', name).spec as { minReplicas?: number }).minReplicas;
    expect([minReplicas('gateway'), minReplicas('query'), minReplicas('stats')]).toEqual([3, 3, 2]);
  });

  it('runs one release image, pinned, in every container', () => {
    const images = new Set(workloads(rendered).flatMap((w) => w.pod.containers.map((c) => c.image)));
    expect(images.size).toBe(1);
    expect([...images][0]).toMatch(/\/classic-car-auctions[:@]/);
    expect(checkImages(rendered)).toEqual([]);
  });
});

describe('docker/compose.yaml', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker/compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<string, { command?: string[]; healthcheck?: { test?: string[]; disable?: boolean } }>;
  };

  it('health-checks /health/ready of every app service', () => {
    for (const app of APPS) {
      const test = compose.services[app].healthcheck?.test ?? [];
      expect([app, test[0], test.join(' ')]).toEqual([app, 'CMD', expect.stringContaining('/health/ready')]);
    }
    expect(compose.services.migrate.healthcheck?.disable).toBe(true);
  });

  it('migrates with the same command as the Kubernetes Job', () => {
    const job = containerOf(renderKustomization('k8s/base', ROOT), 'Job', 'cars-migrations');
    expect(compose.services.migrate.command).toEqual(job.command);
  });

  it('documents how to get a first API key with the admin CLI in the image', () => {
    const text = readFileSync(join(ROOT, 'docker/compose.yaml'), 'utf8');
    expect(text).toMatch(/run --rm migrate \\\n#\s+node dist\/tools\/admin\/src\/main\.js accounts:create --email \S+ --plan \w+ --verified/);
  });
});

/** Each check reports a deliberately broken copy of the real render, naming what broke. */
describe('policy checks report a broken copy', () => {
  let rendered: Manifest[];
  const broken = (mutate: (copy: Manifest[]) => void): Manifest[] => {
    const copy = structuredClone(rendered);
    mutate(copy);
    return copy;
  };

  beforeAll(() => {
    rendered = renderKustomization('k8s/overlays/production', ROOT);
  });

  type Check = (manifests: Manifest[]) => string[];
  const security: Check = checkPodSecurity;
  const network: Check = (m) => checkNetworkPolicies(m, networkRules(m));
  const served: Check = (m) => checkServedWorkloads(m, shutdownDeadlineSeconds(m));

  const cases: [string, (copy: Manifest[]) => void, Check, RegExp][] = [
    [
      'a container without readOnlyRootFilesystem',
      (m) => delete containerOf(m, 'Deployment', 'gateway').securityContext!.readOnlyRootFilesystem,
      security,
      /Deployment\/gateway container gateway: securityContext\.readOnlyRootFilesystem is not true/,
    ],
    [
      'a container allowed to escalate privileges',
      (m) => (containerOf(m, 'Deployment', 'query').securityContext!.allowPrivilegeEscalation = true),
      security,
      /Deployment\/query container query: securityContext\.allowPrivilegeEscalation is not false/,
    ],
    [
      'a pod that may run as root',
      (m) => (podOf(m, 'Deployment', 'stats').securityContext!.runAsNonRoot = false),
      security,
      /Deployment\/stats: pod securityContext\.runAsNonRoot is not true/,
    ],
    [
      'a container running as UID 0',
      (m) => (containerOf(m, 'Deployment', 'stats').securityContext!.runAsUser = 0),
      security,
      /Deployment\/stats container stats: securityContext\.runAsUser is 0/,
    ],
    [
      'the migrations container under an unconfined seccomp profile',
      (m) => (containerOf(m, 'Job', 'cars-migrations').securityContext!.seccompProfile = { type: 'Unconfined' }),
      security,
      /Job\/cars-migrations container migrate: securityContext\.seccompProfile\.type is not RuntimeDefault/,
    ],
    [
      'a container that keeps its capabilities and adds one',
      (m) => (containerOf(m, 'Deployment', 'webhooks').securityContext!.capabilities = { add: ['NET_ADMIN'] }),
      security,
      /webhooks: securityContext\.capabilities\.drop lacks ALL[\s\S]*capabilities\.add is not empty \(NET_ADMIN\)/,
    ],
    [
      'a read-only container without a writable /tmp',
      (m) => (containerOf(m, 'Deployment', 'change-detector').volumeMounts = []),
      security,
      /change-detector: no writable emptyDir mounted at \/tmp/,
    ],
    [
      'an image tagged latest',
      (m) => (containerOf(m, 'Deployment', 'gateway').image = 'registry.example.com/classic-car-auctions:latest'),
      checkImages,
      /gateway: image registry\.example\.com\/classic-car-auctions:latest uses the tag latest/,
    ],
    [
      'an untagged image on a registry with a port',
      (m) => (containerOf(m, 'Job', 'cars-migrations').image = 'registry.example.com:5000/classic-car-auctions'),
      checkImages,
      /migrate: image registry\.example\.com:5000\/classic-car-auctions is not pinned/,
    ],
    [
      'a readiness probe on another route',
      (m) => (containerOf(m, 'Deployment', 'query').readinessProbe!.httpGet!.path = '/'),
      checkProbes,
      /query: readinessProbe is not an HTTP GET of \/health\/ready/,
    ],
    [
      'a scrape annotation on a port nothing serves',
      (m) => {
        const deployment = m.find((x) => x.kind === 'Deployment' && x.metadata.name === 'query')!;
        (deployment.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata.annotations['prometheus.io/port'] = '9100';
      },
      checkScrapeAnnotations,
      /Deployment\/query: scrape port 9100 is not a declared container port/,
    ],
    [
      'a container without a liveness probe',
      (m) => delete containerOf(m, 'Deployment', 'delivery-worker').livenessProbe,
      checkProbes,
      /delivery-worker: no livenessProbe/,
    ],
    [
      'a probe on a port the container does not declare',
      (m) => (containerOf(m, 'Deployment', 'stats').startupProbe!.httpGet!.port = 9999),
      checkProbes,
      /stats: startupProbe port 9999 is not a declared container port/,
    ],
    [
      'a container without a memory limit',
      (m) => delete containerOf(m, 'Deployment', 'webhooks').resources!.limits,
      checkResources,
      /webhooks: resources\.limits\.memory is not set/,
    ],
    [
      'a memory limit below the request',
      (m) => (containerOf(m, 'Deployment', 'gateway').resources!.limits = { memory: '128Mi' }),
      checkResources,
      /gateway: resources\.limits\.memory \(128Mi\) is below the request \(256Mi\)/,
    ],
    [
      'a literal credential in an env value',
      (m) =>
        (containerOf(m, 'Deployment', 'query').env = [{ name: 'DATABASE_URL', value: 'postgres://cars:hunter2@db:5432/cars' }]),
      checkSecrets,
      /query: env DATABASE_URL is a literal credential/,
    ],
    [
      'a credential in the ConfigMap',
      (m) => ((find(m, 'ConfigMap', 'cars-config') as unknown as IConfigMap).data!.RABBITMQ_URL = 'amqp://cars:s3cret@rabbitmq:5672'),
      checkSecrets,
      /ConfigMap\/cars-config: RABBITMQ_URL looks like a credential in a ConfigMap/,
    ],
    [
      'a rendered Secret with placeholder values',
      (m) =>
        m.push({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'cars-secrets', namespace: NAMESPACE },
          stringData: { WEBHOOK_SECRET_KEY: 'change-me' },
        }),
      checkSecrets,
      /Secret\/cars-secrets: WEBHOOK_SECRET_KEY holds a placeholder value/,
    ],
    [
      'no default deny',
      (m) => m.splice(m.indexOf(find(m, 'NetworkPolicy', 'default-deny')), 1),
      network,
      /no default-deny NetworkPolicy/,
    ],
    [
      'ingress from anywhere to every app',
      (m) => (policyOf(m, 'gateway-ingress').spec!.podSelector = {}),
      network,
      /gateway-ingress: ingress from anywhere to (?=.*query)(?=.*delivery-worker)(?=.*migrations)/,
    ],
    [
      'ingress to a service on a port other than its health port',
      (m) => (policyOf(m, 'health-ingress').spec!.ingress![0].ports = [{ protocol: 'TCP', port: 5432 }]),
      network,
      /health-ingress: ingress to .* on TCP\/5432 \(only the health port 8081\)/,
    ],
    [
      'the delivery worker reaching the internet over plain HTTP',
      (m) => policyOf(m, 'delivery-worker-internet-egress').spec!.egress![0].ports!.push({ protocol: 'TCP', port: 80 }),
      network,
      /delivery-worker-internet-egress: egress to the internet on TCP\/443, TCP\/80 \(only TCP 443\)/,
    ],
    [
      'internet egress that does not exclude the metadata range',
      (m) => {
        const block = policyOf(m, 'delivery-worker-internet-egress').spec!.egress![0].to![0].ipBlock!;
        block.except = block.except!.filter((range) => range !== '169.254.0.0/16');
      },
      network,
      /egress to 0\.0\.0\.0\/0 does not exclude 169\.254\.0\.0\/16/,
    ],
    [
      'another app reaching the internet',
      (m) =>
        (policyOf(m, 'delivery-worker-internet-egress').spec!.podSelector = {
          matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['delivery-worker', 'webhooks'] }],
        }),
      network,
      /delivery-worker-internet-egress: egress to the internet from webhooks/,
    ],
    [
      'an egress rule without destinations',
      (m) => delete policyOf(m, 'allow-dns').spec!.egress![0].to,
      network,
      /allow-dns: an egress rule without destinations admits every address/,
    ],
    [
      'a policy whose selector matches no workload',
      (m) => (policyOf(m, 'redis-egress').spec!.podSelector = { matchLabels: { 'app.kubernetes.io/name': 'gatewya' } }),
      network,
      /redis-egress: selects the pods of no workload/,
    ],
    [
      'replicas on a Deployment its HPA owns',
      (m) => ((find(m, 'Deployment', 'gateway').spec as { replicas?: number }).replicas = 3),
      checkReplicaOwnership,
      /Deployment\/gateway: sets replicas \(3\) although HorizontalPodAutoscaler\/gateway owns them/,
    ],
    [
      'a PDB that blocks every drain',
      (m) => ((find(m, 'PodDisruptionBudget', 'webhooks').spec as { minAvailable?: number }).minAvailable = 2),
      checkReplicaOwnership,
      /PodDisruptionBudget\/webhooks: minAvailable 2 leaves no disruption for 2 replica\(s\)/,
    ],
    [
      'a gateway without a preStop sleep',
      (m) => delete containerOf(m, 'Deployment', 'gateway').lifecycle,
      served,
      /Deployment\/gateway container gateway: no preStop sleep/,
    ],
    [
      'a grace period shorter than the preStop sleep and the shutdown deadline',
      (m) => (podOf(m, 'Deployment', 'gateway').terminationGracePeriodSeconds = 15),
      served,
      /Deployment\/gateway: terminationGracePeriodSeconds 15 does not cover/,
    ],
    [
      'a gateway without topology spread',
      (m) => delete podOf(m, 'Deployment', 'gateway').topologySpreadConstraints,
      served,
      /Deployment\/gateway: no topology spread constraint/,
    ],
    [
      'a container port that is not a number',
      (m) => ((containerOf(m, 'Deployment', 'gateway').ports![0] as { containerPort: unknown }).containerPort = 'http'),
      checkSchemas,
      /Deployment\/gateway: .*containerPort must be integer/,
    ],
    [
      'a kind without a schema',
      (m) => m.push({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
      checkSchemas,
      /Widget\/w: no schema for example\.com\/v1 Widget/,
    ],
  ];

  it.each(cases)('%s', (_name, mutate, check, expected) => {
    expect(check(rendered)).toEqual([]);
    expect(check(broken(mutate)).join('\n')).toMatch(expected);
  });

  it('flags the placeholders of the example Secret', () => {
    const example = parseManifests(readFileSync(join(ROOT, 'k8s/examples/secret.example.yaml'), 'utf8'));
    expect(checkSecrets(example)).toHaveLength(4);
  });

  it('reads image references with registry ports, tags and digests', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(parseImage('registry:5000/team/app')).toEqual({ repository: 'registry:5000/team/app', digest: undefined });
    expect(parseImage('registry:5000/team/app:1.2.3')).toEqual({ repository: 'registry:5000/team/app', tag: '1.2.3', digest: undefined });
    expect(parseImage(`app:1.2.3@${digest}`)).toEqual({ repository: 'app', tag: '1.2.3', digest });
    const pinned = broken((m) => (containerOf(m, 'Deployment', 'gateway').image = `registry.example.com/classic-car-auctions@${digest}`));
    expect(checkImages(pinned)).toEqual([]);
  });
});
