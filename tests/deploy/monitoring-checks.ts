import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Manifest, nameOf } from './manifest-policies';

/**
 * Checks of the monitoring objects (k8s/monitoring): the rules through `promtool check rules`,
 * and the series that rules and dashboard name, compared with what the apps serve at /metrics.
 */

interface RuleGroups {
  groups?: { name: string; rules?: { alert?: string; record?: string; expr: string | number }[] }[];
}

const rulesOf = (rule: Manifest): RuleGroups => (rule.spec ?? {}) as RuleGroups;

/**
 * `promtool check rules` on the groups of a PrometheusRule (its spec is a Prometheus rule file).
 * Returns promtool's complaints, none when the rules are valid. Throws when promtool is missing.
 */
export function promtoolCheckRules(rule: Manifest): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'promtool-'));
  try {
    const file = join(dir, `${rule.metadata.name}.rules.yaml`);
    writeFileSync(file, stringify({ groups: rulesOf(rule).groups ?? [] }));
    const run = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8', env: process.env });
    if (run.error) {
      throw new Error(`promtool could not run (${run.error.message}): install Debian's package \`prometheus\` (.ci/run does when promtool is missing)`);
    }
    if (run.status === 0) return [];
    return `${run.stdout}\n${run.stderr}`
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('Checking '))
      .map((line) => `${nameOf(rule)}: ${line}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const PROMQL_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects: every identifier that is not a function, an
 * aggregation, a keyword, a label name (in braces or after by/without/on/ignoring) or a string.
 */
export function seriesInPromQL(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const name = match[0];
    const start = match.index ?? 0;
    if (start > 0 && /[0-9.]/.test(bare[start - 1])) continue; // a unit of a number, e.g. 1e3
    if (PROMQL_KEYWORDS.has(name.toLowerCase())) continue;
    if (/^\s*\(/.test(bare.slice(start + name.length))) continue; // a function or an aggregation
    names.add(name);
  }
  return [...names];
}

/** Where each series is named: `PrometheusRule/x CarsOutboxLag`, `dashboard "Outbox lag"`. */
export type SeriesUses = Map<string, string[]>;

const addUse = (uses: SeriesUses, expr: string, where: string) => {
  for (const series of seriesInPromQL(expr)) uses.set(series, [...(uses.get(series) ?? []), where]);
};

/** The series the rules of a PrometheusRule name, with the rule naming each. */
export function seriesOfRules(rule: Manifest, uses: SeriesUses = new Map()): SeriesUses {
  for (const group of rulesOf(rule).groups ?? []) {
    for (const r of group.rules ?? []) addUse(uses, String(r.expr), `${nameOf(rule)} ${r.alert ?? r.record}`);
  }
  return uses;
}

interface DashboardPanel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: DashboardPanel[];
}

/** The series the panels of a Grafana dashboard (JSON) query, with the panel naming each. */
export function seriesOfDashboard(dashboard: { panels?: DashboardPanel[] }, uses: SeriesUses = new Map()): SeriesUses {
  const visit = (panels: DashboardPanel[] | undefined) => {
    for (const panel of panels ?? []) {
      for (const target of panel.targets ?? []) if (target.expr) addUse(uses, target.expr, `dashboard "${panel.title ?? '?'}"`);
      visit(panel.panels);
    }
  };
  visit(dashboard.panels);
  return uses;
}

/**
 * The series a Prometheus text exposition offers, from its `# TYPE` lines (a series is listed
 * even before its first sample): a histogram's `_bucket`, `_sum`, `_count`, a summary's quantiles,
 * `_sum` and `_count`.
 */
export function exportedSeries(text: string): Set<string> {
  const series = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/gm)) {
    series.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) series.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) series.add(`${name}${suffix}`);
  }
  return series;
}

/** Every named series is exported by some app. */
export function checkSeries(uses: SeriesUses, exported: Set<string>): string[] {
  return [...uses]
    .filter(([series]) => !exported.has(series))
    .map(([series, where]) => `${series} (${[...new Set(where)].join('; ')}) is exported by no app`);
}

// ---------------------------------------------------------------------------------------------
// The image

export interface DockerStage {
  from: string;
  name?: string;
  /** The instructions after FROM, continuation lines joined. */
  instructions: string[];
}

/** The stages of a Dockerfile (comments dropped, `\` continuations joined). */
export function dockerStages(text: string): DockerStage[] {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: DockerStage[] = [];
  for (const line of lines) {
    const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) stages.push({ from: from[1], name: from[2], instructions: [] });
    else stages.at(-1)?.instructions.push(line);
  }
  return stages;
}

export interface ImageRules {
  /** Accepted base images of the final stage, e.g. /^node:(22|24)(-|$)/. */
  base: RegExp;
  /** Packages that must not be in the final stage. */
  excluded: string[];
  /** The lockfile: each excluded package must be dev-only there, so `--omit=dev` leaves it out. */
  lockfile: { packages: Record<string, { dev?: boolean }> };
}

/**
 * Multi-stage; the final stage on a supported Node LTS, running as a numeric non-root user; its
 * node_modules from a stage that installed with `npm ci --omit=dev` (or pruned with it) and no
 * other install; the excluded packages neither named in the final stage nor installable there.
 */
export function checkDockerfile(text: string, rules: ImageRules): string[] {
  const violations: string[] = [];
  const stages = dockerStages(text);
  if (stages.length < 2) violations.push(`one stage only: build and runtime are not separated`);
  const final = stages.at(-1);
  if (!final) return ['no FROM'];
  if (!rules.base.test(final.from)) violations.push(`final stage FROM ${final.from} is not a supported Node LTS (${rules.base})`);
  for (const stage of stages) {
    if (!rules.base.test(stage.from) && !stages.some((s) => s.name === stage.from)) {
      violations.push(`stage ${stage.name ?? stage.from}: FROM ${stage.from} is not a supported Node LTS (${rules.base})`);
    }
  }
  const users = final.instructions.filter((i) => /^USER\s/i.test(i)).map((i) => i.split(/\s+/)[1]);
  const user = users.at(-1);
  if (!user) violations.push('final stage: no USER (runs as root)');
  else if (!/^[1-9][0-9]*(:[1-9][0-9]*)?$/.test(user)) violations.push(`final stage: USER ${user} is not a numeric non-root user`);
  const modules = final.instructions.find((i) => /^COPY\s.*--from=\S+.*node_modules/i.test(i));
  const source = modules ? /--from=(\S+)/.exec(modules)?.[1] : undefined;
  const installs = (stage: DockerStage | undefined) => (stage?.instructions ?? []).filter((i) => /^RUN\s.*\bnpm\s+(ci|install|i)\b/i.test(i));
  if (final.instructions.some((i) => /^RUN\s.*\bnpm\s+(ci|install|i)\b/i.test(i))) {
    const dev = installs(final).filter((i) => !/--omit[= ]dev/.test(i));
    if (dev.length > 0) violations.push(`final stage installs development dependencies: ${dev.join('; ')}`);
  } else if (!modules || !source) {
    violations.push('final stage: node_modules is neither installed nor copied from a stage');
  } else {
    const stage = stages.find((s) => s.name === source);
    const production = (stage?.instructions ?? []).some((i) => /\bnpm\s+(ci|prune)\b.*--omit[= ]dev/.test(i));
    const full = installs(stage).filter((i) => !/--omit[= ]dev/.test(i));
    const pruned = (stage?.instructions ?? []).some((i) => /\bnpm\s+prune\b.*--omit[= ]dev/.test(i));
    if (!production || (full.length > 0 && !pruned)) {
      violations.push(`final stage copies node_modules from stage ${source}, which does not install with --omit=dev`);
    }
  }
  for (const name of rules.excluded) {
    if (final.instructions.some((i) => i.includes(name))) violations.push(`final stage names ${name}`);
    const entries = Object.entries(rules.lockfile.packages).filter(
      ([path]) => path === `node_modules/${name}` || path.startsWith(`node_modules/@${name}/`),
    );
    if (entries.length === 0) violations.push(`${name} is not in the lockfile`);
    for (const [path, entry] of entries) if (entry.dev !== true) violations.push(`${path} is a production dependency in the lockfile`);
  }
  return violations;
}
