/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof` or `list.js --profile DIR`) and prints where the
 * busy time went: by library, the top functions by self time, and our functions by total time.
 * Usage: node bench/dist/profile-top.js FILE.cpuprofile [N]
 */
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A script's path from the repository root (or from node_modules/), whichever copy of the repository it runs from. */
function where(url: string): string {
  const file = url.replace(/^file:\/\//, '');
  const m = /\/((?:node_modules|packages|examples|bench)\/.*)$/.exec(file);
  if (!m) return file;
  const inModules = file.lastIndexOf('/node_modules/');
  return inModules >= 0 ? file.slice(inModules + 1) : m[1];
}

/** The library a frame belongs to, for the by-library table. */
function library(node: ProfileNode): string {
  const { functionName, url } = node.callFrame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  const w = where(url);
  const pkg = /^(packages\/[^/]+|examples\/[^/]+|bench)\/(?:dist\/)?(.*?)(?:\.js)?$/.exec(w);
  if (pkg) return pkg[1].startsWith('packages/core') ? `core ${pkg[2].split('/')[0]}` : pkg[1];
  return w;
}

const label = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'}  ${n.callFrame.url ? `${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}` : ''}`.trim();

export interface ProfileSummary {
  busyMs: number;
  lines: string[];
}

export function summarize(file: string, top = 20): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const libs = new Map<string, number>();
  // Stopping the profiler (node:inspector, from child-ipc.ts) serializes the profile inside the window: not the server's work.
  const profiler = new Set<number>();
  const mark = (n: ProfileNode) => {
    profiler.add(n.id);
    for (const c of n.children ?? []) mark(byId.get(c) as ProfileNode);
  };
  for (const n of profile.nodes) if (n.callFrame.url === 'node:inspector' && !profiler.has(n.id)) mark(n);
  let busy = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id) as ProfileNode;
    if (profiler.has(id)) return;
    if (node.callFrame.functionName === '(idle)') return void (idle += dt);
    busy += dt;
    self.set(label(node), (self.get(label(node)) ?? 0) + dt);
    libs.set(library(node), (libs.get(library(node)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const key = label(byId.get(n) as ProfileNode);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + dt);
    }
  });
  const pct = (v: number) => `${((100 * v) / busy).toFixed(1).padStart(5)} %`;
  const rows = (m: Map<string, number>, n: number, keep: (k: string) => boolean = () => true) =>
    [...m].filter(([k]) => keep(k)).sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `  ${pct(v)}  ${k}`);
  const ours = (k: string) => /(packages|examples)\/[^ ]*:\d+$/.test(k);
  const lines = [
    `${path.basename(file)}: busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms (shares below are of busy time)`,
    'self time by library:',
    ...rows(libs, 14),
    `top ${top} functions by self time:`,
    ...rows(self, top),
    `our functions by total time (self + callees):`,
    ...rows(total, top, ours),
  ];
  return { busyMs: busy / 1000, lines };
}

if (require.main === module) {
  const [file, n] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/dist/profile-top.js FILE.cpuprofile [N]');
    process.exit(2);
  }
  console.log(summarize(file, Number(n ?? 20)).lines.join('\n'));
}
